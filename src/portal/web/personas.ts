import { guarded } from './access';
import { api, type Computation } from './api';
import { announce, badge, h, replace } from './dom';
import type { Page } from './page';
import { chosenSource, listSources, sourcePicker } from './sources';

const KINDS = [
  { title: 'Audiences', segment: 'audiences', listKey: 'audiences' },
  { title: 'Computed traits', segment: 'computed-traits', listKey: 'computedTraits' },
] as const;

export async function personasPage(page: Page): Promise<void> {
  const { main, query } = page;
  const sources = await listSources();
  if (sources.length === 0) {
    replace(main, h('h1', {}, 'Audiences & computed traits'), h('p', {}, 'No source yet.'));
    return;
  }
  const sourceId = chosenSource(sources, query.get('source'));
  const reload = () => personasPage(page);
  const sections: HTMLElement[] = [];
  for (const kind of KINDS) {
    const list = (await api<Record<string, Computation[]>>('GET', `/admin/sources/${encodeURIComponent(sourceId)}/${kind.segment}`))[kind.listKey];
    const act = async (computation: Computation, method: string, suffix: string, body: unknown, done: string) => {
      try {
        await api(method, `/admin/${kind.segment}/${encodeURIComponent(computation.id)}${suffix}`, body);
        announce(done);
        await reload();
      } catch (err) {
        announce(err instanceof Error ? err.message : String(err));
      }
    };
    sections.push(
      h(
        'section',
        { 'aria-labelledby': `${kind.segment}-title` },
        h('h2', { id: `${kind.segment}-title` }, kind.title),
        list.length === 0
          ? h('p', { class: 'muted' }, `None on this source (create them with POST /admin/sources/:sourceId/${kind.segment}).`)
          : h(
              'table',
              { class: kind.segment },
              h('thead', {}, h('tr', {}, ...['Name', 'Trait key', 'Definition', 'Schedule (UTC cron)', 'Last sync', 'Pending', ''].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                ...list.map((c) =>
                  h(
                    'tr',
                    { 'data-id': c.id },
                    h('td', {}, c.name),
                    h('td', {}, h('code', {}, c.key)),
                    h('td', {}, h('pre', {}, JSON.stringify(c.definition, null, 1))),
                    h('td', {}, h('code', {}, c.schedule), ' ', c.paused ? badge('paused') : badge('active', 'ok')),
                    h('td', {}, c.lastSync ? `version ${c.lastSync.version}, ${new Date(c.lastSync.syncedAt).toLocaleString()}` : 'never'),
                    h('td', {}, c.pendingSync ? `${c.pendingSync.changes} change(s) computed ${new Date(c.pendingSync.computedAt).toLocaleString()}` : '–'),
                    h(
                      'td',
                      {},
                      guarded(
                        `PATCH /admin/${kind.segment}/:id`,
                        h('button', { type: 'button', class: 'secondary', onclick: () => act(c, 'PATCH', '', { paused: !c.paused }, c.paused ? 'Schedule resumed' : 'Schedule paused') }, c.paused ? 'Resume' : 'Pause'),
                      ),
                      ' ',
                      guarded(`POST /admin/${kind.segment}/:id/sync`, h('button', { type: 'button', onclick: () => act(c, 'POST', '/sync', undefined, 'Sync started') }, 'Run now')),
                    ),
                  ),
                ),
              ),
            ),
      ),
    );
  }
  replace(
    main,
    h('h1', {}, 'Audiences & computed traits'),
    h('form', { onsubmit: (e: Event) => e.preventDefault() }, sourcePicker(sources, sourceId, (id) => (location.hash = `#/personas?source=${id}`))),
    ...sections,
  );
}
