import { formFor } from './access';
import { api, type Source } from './api';
import { append, copy, field, formValues, h, replace, time } from './dom';
import type { Page } from './page';

export const listSources = async () => (await api<{ sources: Source[] }>('GET', '/admin/sources')).sources;

/** A labelled select of the sources; changing it sets `?source=` in the page's hash. */
const SOURCE_KEY = 'switchyard.portal.source';

/**
 * The source a per-source page shows: the one its URL names, else the one this tab showed last
 * (so the menu's links keep it), else the first. Remembered in sessionStorage, like the token.
 */
export function chosenSource(sources: Source[], fromUrl: string | null): string {
  const remembered = sessionStorage.getItem(SOURCE_KEY);
  const id = fromUrl ?? (sources.some((s) => s.id === remembered) ? remembered! : sources[0].id);
  sessionStorage.setItem(SOURCE_KEY, id);
  return id;
}

export function sourcePicker(sources: Source[], selected: string | undefined, onChange: (sourceId: string) => void, label = 'Source'): HTMLLabelElement {
  const select: HTMLSelectElement = h('select', { name: 'source', onchange: () => onChange(select.value) }, ...sources.map((s) => h('option', { value: s.id, selected: s.id === selected, title: s.id }, s.name)));
  return field(label, select);
}

/** The analytics.js page snippet: analytics-next loads its settings from cdnURL, and sends there too. */
export function analyticsSnippet(writeKey: string, origin: string): string {
  return `<script src="/your/copy/of/@segment/analytics-next/dist/umd/index.js"></script>
<script>
  const analytics = AnalyticsNext.AnalyticsBrowser.load({ writeKey: '${writeKey}', cdnURL: '${origin}' });
  analytics.page();
</script>`;
}

export async function sourcesPage({ main, settings }: Page): Promise<void> {
  const sources = await listSources();
  const created = h('div', { id: 'created-source' });
  const origin = settings.publicUrl || location.origin;
  const form = h(
    'form',
    {
      'aria-label': 'Create a source',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const { name } = formValues(form);
        const source = await api<Source & { writeKey: string }>('POST', '/admin/sources', { name });
        chosenSource([source], source.id);
        form.reset();
        const keyInput = h('input', { readonly: true, value: source.writeKey, id: 'write-key', size: 40 });
        const snippet = analyticsSnippet(source.writeKey, origin);
        const snippetBox = h('textarea', { readonly: true, rows: 5, cols: 90, id: 'snippet' }, snippet);
        replace(
          created,
          h(
            'section',
            { class: 'card once', 'aria-labelledby': 'created-title', 'data-source-id': source.id },
            h('h2', { id: 'created-title' }, `Source “${source.name}” created: copy its write key now`),
            h('p', {}, 'Switchyard keeps only a hash of the write key: it is shown this once.'),
            h('form', { onsubmit: (e: Event) => e.preventDefault() }, field('Write key', keyInput), h('button', { type: 'button', onclick: () => copy(source.writeKey, keyInput) }, 'Copy write key')),
            h('h3', {}, 'analytics.js (analytics-next) snippet'),
            h('form', { onsubmit: (e: Event) => e.preventDefault() }, field('Snippet', snippetBox), h('button', { type: 'button', onclick: () => copy(snippet, snippetBox) }, 'Copy snippet')),
            h('p', { class: 'muted' }, 'Settings URL the library loads: ', h('code', {}, `${origin}/v1/projects/${source.writeKey}/settings`)),
            h('p', {}, h('a', { href: `#/destinations?source=${source.id}` }, 'Add a destination to this source →')),
          ),
        );
        append(tbody, row(source));
      },
    },
    field('Name', h('input', { name: 'name', required: true, maxlength: 200 })),
    h('button', { type: 'submit' }, 'Create source'),
  );
  const row = (s: Source) =>
    h(
      'tr',
      { 'data-source-id': s.id },
      h('td', {}, s.name, ' ', h('small', { class: 'id' }, s.id)),
      h('td', {}, `…${s.writeKeyHint}`),
      h('td', {}, time(s.createdAt)),
      h('td', {}, h('a', { href: `#/destinations?source=${s.id}` }, 'Destinations'), ' · ', h('a', { href: `#/deliveries?sourceId=${s.id}` }, 'Deliveries'), ' · ', h('a', { href: `#/deliveries/live/${s.id}` }, 'Live'), ' · ', h('a', { href: `#/personas?source=${s.id}` }, 'Audiences & traits')),
    );
  const tbody = h('tbody', {}, ...sources.map(row));
  replace(
    main,
    h('h1', {}, 'Sources'),
    formFor('POST /admin/sources', 'Creating sources', () => form),
    created,
    h('table', {}, h('caption', { class: 'muted' }, `${sources.length} source(s)`), h('thead', {}, h('tr', {}, ...['Name', 'Write key', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)))), tbody),
  );
}
