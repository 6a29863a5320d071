import { h } from './dom';

/**
 * A page's panels, closed until opened (a destination with every panel open was 20,000 px of
 * scrolling, each panel a request or several): a panel reads what it shows the first time it opens.
 * Which are open lives in the URL (`?open=filters,replays`), so a reload after a change, a link or
 * the back button opens the same ones.
 */
export class Panels {
  readonly open: Set<string>;

  constructor(query: URLSearchParams) {
    this.open = new Set((query.get('open') ?? '').split(',').filter(Boolean));
  }

  /** A `<details>` panel named `key`; `load` fills it the first time it opens (again after a reload of the page). */
  panel(key: string, title: string, load: (into: HTMLElement) => Promise<void> | void): HTMLDetailsElement {
    const body = h('div', { class: `panel-body ${key}` }, h('p', { class: 'muted' }, 'Loading…'));
    const details = h('details', { class: 'panel', 'data-panel': key }, h('summary', {}, h('h2', {}, title)), body);
    let loaded = false;
    const fill = () => {
      if (loaded) return;
      loaded = true;
      void Promise.resolve(load(body)).catch((err: unknown) => body.replaceChildren(h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err))));
    };
    if (this.open.has(key)) {
      details.open = true;
      fill();
    }
    details.addEventListener('toggle', () => {
      if (details.open) {
        this.open.add(key);
        fill();
      } else this.open.delete(key);
      this.remember();
    });
    return details;
  }

  /** The open panels into the URL without a new history entry or a re-render (replaceState fires no hashchange). */
  private remember(): void {
    const [path, queryText] = location.hash.slice(1).split('?');
    const query = new URLSearchParams(queryText ?? '');
    if (this.open.size > 0) query.set('open', [...this.open].join(','));
    else query.delete('open');
    const text = query.toString().replace(/%2C/g, ',');
    history.replaceState(history.state, '', `#${path}${text ? `?${text}` : ''}`);
  }
}
