import { guarded } from './access';
import { api, type Destination, type Source } from './api';
import { announce, badge, h, replace, time } from './dom';
import { consentPanel, rateLimitPanel, signingPanel, type Patch } from './destination-settings';
import { filtersPanel } from './filters';
import { healthPanel } from './health';
import { mappingHealthPanel } from './mapping-health';
import { mappingsPanel } from './mappings';
import { overviewPanel } from './overview';
import type { Page } from './page';
import { Panels } from './panels';
import { replaysPanel } from './replays';
import { testEventForm } from './test-event';

const PATCH_ROUTE = 'PATCH /admin/destinations/:id';

/** A destination's state in one word, as the list and the page's header show it. */
export const destinationState = (d: Pick<Destination, 'enabled' | 'paused'>) => (!d.enabled ? 'off' : d.paused ? 'paused' : 'on');

/**
 * One destination's page: what it is and its switches at the top, then its panels (overview,
 * URLs or mappings, filters, replays, settings), each closed until opened.
 */
export async function destinationPage(page: Page, destinationId: string, panels = new Panels(page.query)): Promise<void> {
  const { main } = page;
  const path = `/admin/destinations/${encodeURIComponent(destinationId)}`;
  const destination = await api<Destination>('GET', path);
  const source = await api<Source>('GET', `/admin/sources/${encodeURIComponent(destination.sourceId)}`).catch(() => undefined);
  if (page.left()) return;
  // After a change the page is read again with the same panels open.
  const reload = () => destinationPage(page, destinationId, panels);
  const patch: Patch = async (body, done) => {
    try {
      await api('PATCH', path, body);
      // Announced once the page shows the change: the reload replaces every form on it.
      await reload();
      announce(done);
    } catch (err) {
      announce(err instanceof Error ? err.message : String(err));
    }
  };
  const isActions = destination.type === 'actions' && destination.mappings !== undefined;
  const state = destinationState(destination);
  replace(
    main,
    h('p', {}, h('a', { href: `#/destinations?source=${encodeURIComponent(destination.sourceId)}` }, `← Destinations of ${source?.name ?? destination.sourceId}`)),
    h(
      'section',
      { class: 'destination', 'data-destination-id': destination.id, 'aria-label': `Destination ${destination.name}` },
      h('h1', {}, destination.name, ' ', badge(state, state === 'on' ? 'on' : state), ' ', h('span', { class: 'muted destination-type' }, isActions ? 'actions' : 'webhooks')),
      h(
        'p',
        { class: 'muted' },
        h('small', { class: 'id' }, destination.id),
        ' · source ',
        source ? h('span', { class: 'named', title: source.id }, source.name) : h('code', {}, destination.sourceId),
        ' · created ',
        time(destination.createdAt),
        ' · ',
        h('a', { href: `#/deliveries?sourceId=${encodeURIComponent(destination.sourceId)}&destinationId=${encodeURIComponent(destination.id)}` }, 'its deliveries'),
      ),
      h(
        'p',
        { class: 'switches' },
        guarded(PATCH_ROUTE, h('button', { type: 'button', class: 'secondary', onclick: () => patch({ enabled: !destination.enabled }, destination.enabled ? 'Switched off' : 'Switched on') }, destination.enabled ? 'Switch off' : 'Switch on')),
        ' ',
        // Hold, unlike switching off, keeps every message and sends them on resume.
        guarded(
          PATCH_ROUTE,
          h('button', { type: 'button', class: 'secondary', onclick: () => patch({ paused: !destination.paused }, destination.paused ? 'Resumed: held messages are sent' : 'Paused: messages are held') }, destination.paused ? 'Resume' : 'Pause'),
        ),
      ),
      h(
        'p',
        { class: 'flow-state' },
        destination.paused ? h('span', {}, 'Paused since ', time(destination.pausedAt ?? destination.createdAt), ': messages are held, not sent, and go out on resume. ') : 'Sending. ',
        destination.maxRequestsPerSecond === null ? 'No rate limit.' : `Rate limit: ${destination.maxRequestsPerSecond} requests per second.`,
      ),
      testEventForm(destination),
      panels.panel('overview', 'Delivery overview (last 24 h)', (into) => overviewPanel(destination, into, page)),
      isActions && panels.panel('health', 'Mapping health', (into) => mappingHealthPanel({ ...destination, mappings: destination.mappings! }, into, page, reload)),
      isActions
        ? panels.panel('mappings', 'Mappings', (into) => replace(into, mappingsPanel({ ...destination, mappings: destination.mappings! }, reload)))
        : panels.panel('webhooks', 'Webhook URLs and health', (into) => healthPanel(destination, into, page, reload)),
      panels.panel('filters', 'Filters', (into) => filtersPanel(destination, into, page, reload)),
      panels.panel('replays', 'Replays', (into) => replaysPanel(destination, into, page)),
      panels.panel('rate-limit', 'Rate limit', (into) => rateLimitPanel(destination, into, patch)),
      panels.panel('consent', 'Consent', (into) => consentPanel(destination, into, patch)),
      panels.panel('signing', 'Signatures', (into) => signingPanel(destination, into, patch)),
    ),
  );
}
