import { api, type AuditEntry } from './api';
import { badge, field, formValues, h, replace, time } from './dom';
import { loadNames, named } from './names';
import type { Page } from './page';

interface AuditPageReply {
  entries: AuditEntry[];
  nextCursor?: string;
}

const FILTERS = ['actor', 'action', 'target'] as const;

/** GET /admin/audit: who changed what and when, newest first; filters in the URL, more on demand. */
export async function auditPage(page: Page): Promise<void> {
  const { main, query } = page;
  const filter = new URLSearchParams();
  for (const name of FILTERS) if (query.get(name)) filter.set(name, query.get(name)!);
  const body = h('tbody', {});
  const more = h('button', { type: 'button', id: 'audit-more', hidden: true }, 'Older entries');
  let cursor: string | undefined;
  // Targets and actors by name, the id on hover (a deleted one, or a kind without a name, shows its id).
  const names = await loadNames();
  const load = async () => {
    const params = new URLSearchParams(filter);
    if (cursor) params.set('cursor', cursor);
    const reply = await api<AuditPageReply>('GET', `/admin/audit?${params}`);
    for (const entry of reply.entries) {
      body.append(
        h(
          'tr',
          { 'data-audit-id': entry.id },
          h('td', {}, time(entry.at)),
          h('td', {}, entry.actor.tokenId ? h('span', { class: 'named', title: entry.actor.tokenId }, entry.actor.name ?? entry.actor.tokenId) : entry.actor.name ?? '(no valid token)'),
          h('td', {}, h('code', {}, entry.action)),
          h('td', { class: 'audit-target' }, entry.target ? named(names, entry.target) : '–'),
          h('td', {}, badge(entry.outcome, entry.outcome === 'success' ? 'delivered' : 'failed')),
          h('td', {}, entry.changed.join(', ') || '–'),
          h('td', {}, entry.ip),
        ),
      );
    }
    cursor = reply.nextCursor;
    more.hidden = cursor === undefined;
  };
  more.addEventListener('click', () => void load());
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Filter the audit log',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const values = formValues(event.target as HTMLFormElement);
        const next = new URLSearchParams(Object.entries(values).filter(([, value]) => value));
        location.hash = `#/audit?${next}`;
      },
    },
    ...FILTERS.map((name) => field(name[0].toUpperCase() + name.slice(1), h('input', { name, value: query.get(name) ?? '' }))),
    h('button', { type: 'submit' }, 'Filter'),
  );
  await load();
  replace(
    main,
    h('h1', {}, 'Audit log'),
    h('p', { class: 'muted' }, 'Every change made through the admin API, and every refused request. Field names only, never their values. Actions taken in the Temporal Web UI are not here.'),
    form,
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...['When', 'Who', 'Action', 'Target', 'Outcome', 'Fields', 'Address'].map((title) => h('th', { scope: 'col' }, title)))),
      body,
    ),
    more,
  );
}
