import { api, ApiFailure, type Destination } from './api';
import { h, replace } from './dom';
import type { Page } from './page';
// The reasons in the decision's order and words, as the overview route and the metric name them.
import { FILTERED_REASONS, type FilteredReason } from '../../delivery/message-counts';

/** GET /admin/destinations/:id/overview: where the window's messages went. */
export interface DestinationOverview {
  since: string;
  until: string;
  received: number;
  /** Each reason decided at ingest, and `stopped`: stopped at send time, after the delivery started. */
  filtered: Record<FilteredReason | 'stopped', number>;
  delivered: number;
  retrying: number;
  failed: number;
  /** Replayed deliveries, apart: their messages were received before the window. */
  replayed: { delivered: number; retrying: number; failed: number; stopped: number };
  byFilter: { id: string; title: string; dropped: number }[];
}

/** Why a reason stopped a message, for the row's tooltip and screen readers. */
const REASON_HELP: Record<FilteredReason, string> = {
  plan: "the source's tracking plan blocked it",
  integrations: 'the call\'s integrations object left this destination out',
  consent: 'a consent category this destination needs was not granted',
  suppressed: 'a SUPPRESS regulation covers the user',
  filters: 'a filter dropped it (or left nothing to send)',
  sampled: 'a SAMPLE filter left it out',
  transformation: 'a transformation with drop matched it',
  trigger: 'no enabled mapping of this actions destination has a trigger it meets',
};
const STOPPED_HELP = 'stopped at send time: the destination was switched off or lost its URL or mapping, or a regulation stopped the delivery';

/**
 * One funnel step: its name, its count as text (what a screen reader reads and the test checks) and
 * a bar scaled to received, hidden from assistive technology since the number says it all.
 */
function step(name: string, count: number, of: number, kind: string, help?: string): HTMLElement {
  const bar = h('span', { class: `bar bar-${kind}` });
  // Through the CSSOM: the portal's CSP refuses style attributes.
  bar.style.width = `${of > 0 ? Math.min(100, (count / of) * 100).toFixed(1) : 0}%`;
  return h(
    'tr',
    { 'data-step': name, title: help },
    h('th', { scope: 'row' }, name),
    h('td', { class: 'count' }, String(count)),
    h('td', { class: 'bar-cell', 'aria-hidden': 'true' }, bar),
  );
}

/** The last 24 h of a destination as a funnel: received → filtered by reason → delivered / retrying / failed, then drops per filter. */
export async function overviewPanel(destination: Destination, into: HTMLElement, page: Page): Promise<void> {
  let overview: DestinationOverview;
  try {
    overview = await api<DestinationOverview>('GET', `/admin/destinations/${encodeURIComponent(destination.id)}/overview`);
  } catch (err) {
    if (!page.left()) replace(into, h('p', { class: 'muted' }, `Overview unavailable: ${err instanceof ApiFailure ? err.message : String(err)}`));
    return;
  }
  if (page.left()) return;
  const { received } = overview;
  // Only an actions destination has triggers; the others never stop a message there. Plan and
  // transformation rows show once they stopped something (most sources have neither).
  const reasons = FILTERED_REASONS.filter((reason) => reason !== 'trigger' || destination.type === 'actions').filter((reason) => (reason !== 'plan' && reason !== 'transformation') || overview.filtered[reason] > 0);
  const filteredTotal = reasons.reduce((sum, reason) => sum + overview.filtered[reason], overview.filtered.stopped);
  const { replayed } = overview;
  const replayedTotal = replayed.delivered + replayed.retrying + replayed.failed + replayed.stopped;
  replace(
    into,
    h(
      'table',
      { class: 'funnel' },
      h('caption', {}, 'Last 24 h: where the messages went'),
      h('tbody', {}, step('received', received, received, 'received'), step('filtered', filteredTotal, received, 'filtered')),
      h(
        'tbody',
        { class: 'reasons' },
        ...reasons.map((reason) => step(reason, overview.filtered[reason], received, 'filtered', REASON_HELP[reason])),
        step('stopped', overview.filtered.stopped, received, 'filtered', STOPPED_HELP),
      ),
      h('tbody', {}, step('delivered', overview.delivered, received, 'delivered'), step('retrying', overview.retrying, received, 'retrying'), step('failed', overview.failed, received, 'failed')),
    ),
    overview.byFilter.length > 0 &&
      h(
        'table',
        { class: 'by-filter' },
        h('caption', {}, 'Dropped or sampled out by each filter'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Filter'), h('th', { scope: 'col' }, 'Dropped'))),
        h('tbody', {}, ...overview.byFilter.map((f) => h('tr', { 'data-filter-id': f.id }, h('td', {}, f.title), h('td', { class: 'count' }, String(f.dropped))))),
      ),
    replayedTotal > 0 &&
      h(
        'p',
        { class: 'replayed' },
        `Replayed in the window, counted apart: ${replayed.delivered} delivered, ${replayed.retrying} retrying, ${replayed.failed} failed, ${replayed.stopped} stopped.`,
      ),
    h(
      'p',
      { class: 'muted' },
      "Filtered is decided at ingest (stopped: at send time); delivered, retrying and failed are this destination's own outcome of the deliveries started in the window, from Temporal visibility.",
    ),
  );
}
