import { holds } from './access';
import { api, ApiFailure, type Destination, type FateRow, type Source } from './api';
import { append, badge, field, formValues, h, replace, time } from './dom';
import type { Page } from './page';

/** The words GET /admin/fates stops a call with (delivery/stop-reasons.ts), in the overview's order. */
const REASONS = ['plan', 'integrations', 'consent', 'suppressed', 'filters', 'sampled', 'transformation', 'trigger'];

/** How often a source's live view asks for the calls that arrived since. */
const LIVE_POLL_MS = 2_000;
const LIVE_CALLS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
const WITHHELD = 'The user id and the event name are payload: showing them and searching by them needs a token with the payloads:read scope.';

/** A payload field: its value to payloads:read, a dash that says why to everyone else. */
const payloadCell = (value: string | undefined) => (value !== undefined ? h('td', {}, value) : h('td', { class: 'muted withheld', title: 'Needs the payloads:read scope' }, '–'));

/** A row's message: a link to its delivery where one was started, the id alone where the decision stopped it. */
const messageCell = (row: FateRow) =>
  h('td', {}, row.decision === 'sent' ? h('a', { href: `#/deliveries/${encodeURIComponent(row.sourceId)}/${encodeURIComponent(row.messageId)}` }, row.messageId) : h('code', {}, row.messageId));

function fateRow(row: FateRow): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-message-id': row.messageId, 'data-destination-id': row.destinationId, 'data-status': row.status },
    h('td', {}, time(row.receivedAt)),
    payloadCell(row.event ?? (row.type === 'track' ? undefined : row.type)),
    payloadCell(row.userId ?? row.anonymousId),
    h('td', {}, h('span', { class: 'named', title: row.destinationId }, row.destinationName)),
    h('td', {}, badge(row.status)),
    h('td', { class: 'reason' }, row.reason ?? ''),
    messageCell(row),
  );
}

/**
 * "What happened to one event": every call's decision per destination (delivered, failed, or
 * stopped and why), searched by user id, event name, destination, status and time. The user id and
 * the event name are payload questions: their fields are there only for payloads:read.
 */
export function fatesSearch(sources: Source[], bySource: Map<string, Destination[]>, left: () => boolean): HTMLElement {
  const payloads = holds('payloads:read');
  const tbody = h('tbody');
  const more = h('div');
  const problem = h('div', { 'aria-live': 'polite' });
  let filters = new URLSearchParams();
  const load = async (cursor?: string) => {
    const params = new URLSearchParams(filters);
    if (cursor) params.set('cursor', cursor);
    let page: { fates: FateRow[]; nextCursor?: string };
    try {
      page = await api<{ fates: FateRow[]; nextCursor?: string }>('GET', `/admin/fates?${params}`);
    } catch (err) {
      replace(problem, h('p', { class: 'error', role: 'alert' }, err instanceof ApiFailure ? err.message : String(err)));
      return;
    }
    if (left()) return;
    replace(problem);
    if (!cursor) replace(tbody);
    append(tbody, ...page.fates.map(fateRow));
    if (tbody.childElementCount === 0) append(tbody, h('tr', {}, h('td', { colspan: 7 }, 'No call matches.')));
    replace(more, page.nextCursor && h('button', { type: 'button', class: 'secondary', onclick: () => load(page.nextCursor) }, 'Load more'));
  };
  const form = h(
    'form',
    {
      'aria-label': 'Find what happened to an event',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const values = formValues(form);
        filters = new URLSearchParams();
        for (const [name, value] of Object.entries({ ...values, since: toIso(values.since), until: toIso(values.until) })) if (value) filters.set(name, value);
        void load();
      },
    },
    field('User id', h('input', { name: 'userId', disabled: !payloads, title: payloads ? '' : 'Needs the payloads:read scope' })),
    field('Event name', h('input', { name: 'event', disabled: !payloads, title: payloads ? '' : 'Needs the payloads:read scope' })),
    field(
      'Destination',
      h(
        'select',
        { name: 'destinationId' },
        h('option', { value: '' }, 'any'),
        ...sources.map((s) => h('optgroup', { label: s.name }, ...(bySource.get(s.id) ?? []).map((d) => h('option', { value: d.id, title: d.id }, d.name)))),
      ),
    ),
    field('Status', h('select', { name: 'status' }, h('option', { value: '' }, 'any'), h('option', { value: 'sent' }, 'sent'), h('option', { value: 'stopped' }, 'stopped'))),
    field('Stopped by', h('select', { name: 'reason' }, h('option', { value: '' }, 'any'), ...REASONS.map((r) => h('option', { value: r }, r)))),
    field('Received since', h('input', { type: 'datetime-local', name: 'since' })),
    field('Received until', h('input', { type: 'datetime-local', name: 'until' })),
    h('button', { type: 'submit' }, 'Find'),
  );
  void load();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'fates-title' },
    h('h2', { id: 'fates-title' }, 'What happened to an event'),
    h('p', { class: 'muted' }, 'Every call, at every destination: delivered, failed, or stopped at ingest and why (plan, integrations, consent, suppressed, filters, …), for as long as the archive keeps calls (ARCHIVE_RETENTION).'),
    !payloads && h('p', { class: 'muted', id: 'fates-withheld' }, WITHHELD),
    form,
    problem,
    h('table', { class: 'fates' }, h('thead', {}, h('tr', {}, ...['Received', 'Event', 'User', 'Destination', 'Status', 'Reason', 'Message id'].map((t) => h('th', { scope: 'col' }, t)))), tbody),
    more,
  );
}

/** One call of the live view: its destinations' outcomes on one line. */
function liveCall(rows: FateRow[]): HTMLTableRowElement {
  const [first] = rows;
  return h(
    'tr',
    { 'data-message-id': first.messageId },
    h('td', {}, time(first.receivedAt)),
    h('td', {}, first.type),
    payloadCell(first.event),
    payloadCell(first.userId ?? first.anonymousId),
    h(
      'td',
      { class: 'outcomes' },
      // By destination name, so a call's line reads the same on every poll.
      ...[...rows].sort((a, b) => a.destinationName.localeCompare(b.destinationName)).map((row) => h('span', { class: 'outcome', 'data-destination-id': row.destinationId }, `${row.destinationName}: `, badge(row.status), row.reason ? ` ${row.reason}` : '', ' ')),
    ),
    messageCell(first),
  );
}

/**
 * A source's live view, like Segment's Debugger: its last calls as they arrive (asked for every
 * LIVE_POLL_MS while the page is open), each with what every destination did with it.
 */
export async function livePage(page: Page, sourceId: string): Promise<void> {
  const { main } = page;
  const source = await api<Source>('GET', `/admin/sources/${encodeURIComponent(sourceId)}`);
  const tbody = h('tbody');
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  replace(
    main,
    h('p', {}, h('a', { href: '#/deliveries' }, '← Deliveries')),
    h('h1', {}, 'Live: ', h('span', { class: 'named', title: source.id }, source.name)),
    h('p', { class: 'muted' }, `The source's last ${LIVE_CALLS} destination decisions, newest first, read again every ${LIVE_POLL_MS / 1000} s.`),
    !holds('payloads:read') && h('p', { class: 'muted', id: 'fates-withheld' }, WITHHELD),
    status,
    h('table', { class: 'live' }, h('thead', {}, h('tr', {}, ...['Received', 'Type', 'Event', 'User', 'Destinations', 'Message id'].map((t) => h('th', { scope: 'col' }, t)))), tbody),
  );
  while (!page.left()) {
    try {
      const { fates } = await api<{ fates: FateRow[] }>('GET', `/admin/fates?sourceId=${encodeURIComponent(sourceId)}&limit=${LIVE_CALLS}`);
      if (page.left()) return;
      const calls = new Map<string, FateRow[]>();
      for (const row of fates) calls.set(row.messageId, [...(calls.get(row.messageId) ?? []), row]);
      replace(tbody, ...[...calls.values()].map(liveCall));
      if (calls.size === 0) append(tbody, h('tr', {}, h('td', { colspan: 6 }, 'Waiting for the first call…')));
      replace(status, `Updated ${new Date().toLocaleTimeString()}`);
    } catch (err) {
      replace(status, h('span', { class: 'error', role: 'alert' }, err instanceof ApiFailure ? err.message : String(err)));
    }
    await sleep(LIVE_POLL_MS);
  }
}
