import { formFor, guarded, holds } from './access';
import { api, ApiFailure, type Attempt, type DeliveryDetail, type Destination, type DeliveryRow, type PortalSettings, type Source } from './api';
import { announce, append, badge, field, formValues, h, replace, time } from './dom';
import type { Page } from './page';
import { destinationsBySource, loadNames, namedWithId } from './names';
import { listSources } from './sources';
import { fatesSearch } from './fates';
// Types only (erased in the bundle): the progress the API answers with, as the server defines it.
import type { RedeliveryProgress as RedeliveryJob } from '../../delivery/redelivery-job';

const STATUSES = ['delivering', 'retrying', 'delivered', 'failed', 'stopped'];
const TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete'];
const FILTERS = ['sourceId', 'destinationId', 'status', 'type', 'userId', 'since', 'until'] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `2026-11-24T10:00` (datetime-local, the browser's time zone) ↔ an ISO instant. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
const toLocal = (iso: string | null) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function temporalUiLink(settings: PortalSettings, workflowId: string, runId: string): string {
  return `${settings.temporalUiUrl}/namespaces/${encodeURIComponent(settings.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}

const deliveryHref = (row: Pick<DeliveryRow, 'sourceId' | 'messageId'>) => `#/deliveries/${encodeURIComponent(row.sourceId)}/${encodeURIComponent(row.messageId)}`;

/** A select of destinations by name, grouped by source (their ids are the values the API filters by). */
function destinationSelect(name: string, sources: Source[], bySource: Map<string, Destination[]>, selected: string | null, anyLabel: string): HTMLSelectElement {
  return h(
    'select',
    { name },
    h('option', { value: '' }, anyLabel),
    ...sources.map((s) =>
      h('optgroup', { label: s.name }, ...(bySource.get(s.id) ?? []).map((d) => h('option', { value: d.id, selected: selected === d.id, title: d.id }, d.name))),
    ),
  );
}

export async function deliveriesPage(page: Page): Promise<void> {
  const { main, query } = page;
  const sources = await listSources();
  const bySource = await destinationsBySource(sources);
  const select = (name: string, options: string[], labels: string[] = options) =>
    h('select', { name }, h('option', { value: '' }, 'any'), ...options.map((value, i) => h('option', { value, selected: query.get(name) === value }, labels[i])));
  const filterForm = h(
    'form',
    {
      'aria-label': 'Filter deliveries',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const values = formValues(filterForm);
        const next = new URLSearchParams();
        for (const name of FILTERS) {
          const value = name === 'since' || name === 'until' ? toIso(values[name]) : values[name];
          if (value) next.set(name, value);
        }
        const hash = `#/deliveries?${next}`;
        if (location.hash === hash) void deliveriesPage(page);
        else location.hash = hash;
      },
    },
    field('Source', select('sourceId', sources.map((s) => s.id), sources.map((s) => s.name))),
    field('Destination', destinationSelect('destinationId', sources, bySource, query.get('destinationId'), 'any')),
    field('Status', select('status', STATUSES)),
    field('Type', select('type', TYPES)),
    field('User id', h('input', { name: 'userId', value: query.get('userId') ?? '', disabled: !holds('payloads:read'), title: holds('payloads:read') ? '' : 'Needs the payloads:read scope' })),
    field('Started since', h('input', { type: 'datetime-local', name: 'since', value: toLocal(query.get('since')) })),
    field('Started until', h('input', { type: 'datetime-local', name: 'until', value: toLocal(query.get('until')) })),
    h('button', { type: 'submit' }, 'Apply filters'),
  );

  const tbody = h('tbody');
  const more = h('div');
  const sourceName = new Map(sources.map((s) => [s.id, s.name]));
  const loadPage = async (cursor?: string) => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (query.get(name)) params.set(name, query.get(name)!);
    if (cursor) params.set('cursor', cursor);
    const { deliveries, nextCursor } = await api<{ deliveries: DeliveryRow[]; nextCursor?: string }>('GET', `/admin/deliveries?${params}`);
    if (page.left()) return;
    append(
      tbody,
      ...deliveries.map((row) =>
        h(
          'tr',
          { 'data-message-id': row.messageId },
          h('td', {}, badge(row.status)),
          h('td', {}, row.type),
          h('td', {}, row.userId ?? '–'),
          h('td', {}, h('a', { href: deliveryHref(row) }, row.messageId)),
          h('td', {}, h('span', { class: 'named', title: row.sourceId }, sourceName.get(row.sourceId) ?? row.sourceId)),
          h('td', {}, time(row.startedAt)),
          h('td', {}, time(row.closedAt)),
        ),
      ),
    );
    if (tbody.childElementCount === 0) append(tbody, h('tr', {}, h('td', { colspan: 7 }, 'No delivery matches.')));
    replace(more, nextCursor && h('button', { type: 'button', class: 'secondary', onclick: () => loadPage(nextCursor) }, 'Load more'));
  };
  await loadPage();
  replace(
    main,
    h('h1', {}, 'Deliveries'),
    fatesSearch(sources, bySource, page.left),
    h('h2', {}, 'Delivery workflows'),
    filterForm,
    h('p', { class: 'muted' }, 'Newest first, from Temporal visibility: a delivery that just started or ended may take a moment to show its status.'),
    h('table', { class: 'deliveries' }, h('thead', {}, h('tr', {}, ...['Status', 'Type', 'User', 'Message id', 'Source', 'Started', 'Closed'].map((t) => h('th', { scope: 'col' }, t)))), tbody),
    more,
    formFor('POST /admin/sources/:sourceId/redeliver', 'Redelivering what failed', () => bulkRedeliverForm(page, sources, bySource)),
  );
}

/** Redeliver every failed delivery of a source (optionally one destination) started in a time range, with progress. */
function bulkRedeliverForm(page: Page, sources: Source[], bySource: Map<string, Destination[]>): HTMLElement {
  const { query } = page;
  const progress = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      'aria-label': 'Redeliver failed deliveries',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const values = formValues(form);
        const body = { status: 'failed', since: toIso(values.since), until: toIso(values.until), ...(values.destinationId && { destinationId: values.destinationId }) };
        let id: string;
        try {
          ({ id } = await api<{ id: string }>('POST', `/admin/sources/${encodeURIComponent(values.sourceId)}/redeliver`, body));
        } catch (err) {
          replace(progress, h('p', { class: 'error', role: 'alert' }, err instanceof ApiFailure ? err.message : String(err)));
          return;
        }
        for (;;) {
          const state = await api<RedeliveryJob>('GET', `/admin/redeliveries/${encodeURIComponent(id)}`);
          if (page.left()) return;
          replace(
            progress,
            h('p', { class: 'bulk-progress', 'data-job-status': state.status }, badge(state.status), ` ${state.matched} matched · ${state.started} redelivered · ${state.finished} finished · ${state.skipped} skipped`),
            h('progress', { max: Math.max(state.started, 1), value: state.finished, 'aria-label': 'Redeliveries finished' }),
            state.error && h('p', { class: 'error', role: 'alert' }, state.error),
          );
          if (state.status !== 'running') return;
          await sleep(1000);
        }
      },
    },
    field('Source', h('select', { name: 'sourceId', required: true }, ...sources.map((s) => h('option', { value: s.id, selected: query.get('sourceId') === s.id }, s.name)))),
    field('Destination (optional)', destinationSelect('destinationId', sources, bySource, query.get('destinationId'), 'every destination')),
    field('Failed since', h('input', { type: 'datetime-local', name: 'since', required: true, value: toLocal(query.get('since') ?? new Date(Date.now() - 3600_000).toISOString()) })),
    field('until', h('input', { type: 'datetime-local', name: 'until', required: true, value: toLocal(query.get('until') ?? new Date(Date.now() + 60_000).toISOString()) })),
    h('button', { type: 'submit' }, 'Redeliver failed deliveries'),
  );
  return h('section', { class: 'card', 'aria-labelledby': 'bulk-title' }, h('h2', { id: 'bulk-title' }, 'Redeliver what failed'), form, progress);
}

/** One destination's attempts on a line: a dot per attempt at its start time, coloured by outcome. */
function attemptStrip(attempts: Attempt[], start: number): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const width = 480;
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} 24`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', '24');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('aria-hidden', 'true');
  const times = attempts.map((a) => (a.startedAt ? Date.parse(a.startedAt) - start : 0));
  // At least a second wide, so a first attempt a few milliseconds after the start sits at the left.
  const span = Math.max(1000, ...times.map((t, i) => t + (attempts[i].durationMs ?? 0)));
  const axis = document.createElementNS(ns, 'line');
  for (const [k, v] of Object.entries({ x1: '8', x2: String(width - 8), y1: '12', y2: '12', stroke: '#c9d2e3' })) axis.setAttribute(k, v);
  svg.appendChild(axis);
  attempts.forEach((attempt, i) => {
    const dot = document.createElementNS(ns, 'circle');
    dot.setAttribute('cx', (8 + (times[i] / span) * (width - 16)).toFixed(1));
    dot.setAttribute('cy', '12');
    dot.setAttribute('r', '6');
    dot.setAttribute('fill', attempt.outcome === 'success' ? '#2a9d4b' : attempt.outcome === 'retry' ? '#e0a800' : '#c62828');
    svg.appendChild(dot);
  });
  return svg;
}

function attemptItem(attempt: Attempt, start: number): HTMLLIElement {
  const offset = attempt.startedAt ? `+${((Date.parse(attempt.startedAt) - start) / 1000).toFixed(1)} s` : '';
  const answer = attempt.httpStatus !== undefined ? `HTTP ${attempt.httpStatus}` : attempt.error ?? 'no answer';
  return h(
    'li',
    { class: `outcome-${attempt.outcome}` },
    h('strong', {}, offset), ' ',
    attempt.mapping === undefined ? `webhook ${attempt.webhookIndex + 1}, round ${attempt.round} · ` : `mapping "${attempt.mapping}", round ${attempt.round} · `,
    attempt.url && h('code', {}, attempt.url), ' · ',
    h('span', { class: 'answer' }, answer), ' ',
    badge(attempt.outcome),
    attempt.durationMs !== undefined && ` · ${attempt.durationMs} ms`,
    attempt.startedAt && h('div', { class: 'muted' }, time(attempt.startedAt)),
  );
}

const UNDER_WAY = ['delivering', 'retrying'];

export async function deliveryPage(page: Page, sourceId: string, messageId: string): Promise<void> {
  const { main, settings } = page;
  const path = `/admin/sources/${encodeURIComponent(sourceId)}/deliveries/${encodeURIComponent(messageId)}`;
  let detail = await api<DeliveryDetail>('GET', path);
  const names = await loadNames();
  const show = () => {
    const start = Date.parse(detail.startedAt);
    replace(
      main,
      h('p', {}, h('a', { href: `#/deliveries?sourceId=${encodeURIComponent(sourceId)}` }, '← Deliveries of this source')),
      h('h1', {}, 'Delivery ', h('code', {}, detail.messageId)),
      h(
        'table',
        { class: 'facts' },
        h(
          'tbody',
          {},
          ...(
            [
              ['Status', h('span', { id: 'delivery-status' }, badge(detail.status))],
              ['Type', detail.type],
              ['User', detail.userId ?? '–'],
              ['Source', namedWithId(names, detail.sourceId)],
              ['Started', time(detail.startedAt)],
              ['Closed', time(detail.closedAt) || '–'],
              ['Workflow', h('span', {}, h('code', {}, detail.workflowId), ' run ', h('code', {}, detail.runId))],
              ['Redelivery', detail.redelivery ? ['requested ', new Date(detail.redelivery.requestedAt).toLocaleString(), ', previous run ', detail.redelivery.previousRunId].join('') : 'no'],
            ] as [string, Node | string][]
          ).map(([label, value]) => h('tr', {}, h('th', { scope: 'row' }, label), h('td', {}, value))),
        ),
      ),
      h(
        'p',
        {},
        h('a', { href: temporalUiLink(settings, detail.workflowId, detail.runId), target: '_blank', rel: 'noopener noreferrer', id: 'temporal-link' }, 'Open this workflow in the Temporal Web UI ↗'),
        ' ',
        guarded('POST /admin/sources/:sourceId/deliveries/:messageId/redeliver', h('button', { type: 'button', id: 'redeliver', disabled: UNDER_WAY.includes(detail.status), onclick: () => redeliver() }, 'Redeliver')),
      ),
      ...detail.destinations.map((d) =>
        h(
          'section',
          { class: 'card', 'data-destination-id': d.destinationId, 'aria-label': `Attempts to ${names.get(d.destinationId)?.name ?? d.destinationId}` },
          h('h2', {}, 'Destination ', namedWithId(names, d.destinationId), ' ', d.status ? badge(d.status) : badge('under way', 'delivering')),
          d.reason && h('p', { class: 'reason' }, d.reason),
          attemptStrip(d.attempts, start),
          h('ol', { class: 'timeline' }, ...d.attempts.map((a) => attemptItem(a, start))),
        ),
      ),
      detail.destinations.length === 0 && h('p', {}, 'No attempt yet.'),
      detail.message === undefined
        ? h('p', { class: 'muted', id: 'message-withheld' }, 'The message body needs a token with the payloads:read scope.')
        : h('details', {}, h('summary', {}, 'Message body'), h('pre', {}, JSON.stringify(detail.message, null, 2))),
    );
  };
  /** Follows a run under way until it ends (the page shows each new attempt as it comes). */
  const follow = async (runId: string) => {
    for (;;) {
      if (page.left()) return;
      const next = await api<DeliveryDetail>('GET', path).catch(() => undefined);
      if (page.left()) return;
      if (next && next.runId === runId) {
        detail = next;
        show();
        if (!UNDER_WAY.includes(next.status)) return;
      }
      await sleep(1000);
    }
  };
  const redeliver = async () => {
    try {
      const started = await api<{ runId: string }>('POST', `${path}/redeliver`);
      announce('Redelivery started');
      await follow(started.runId);
    } catch (err) {
      announce(err instanceof Error ? err.message : String(err));
    }
  };
  show();
  if (UNDER_WAY.includes(detail.status)) void follow(detail.runId);
}
