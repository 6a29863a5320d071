import { guarded, type RouteKey } from './access';
import { api, ApiFailure, type Destination, type Mapping } from './api';
import { announce, badge, h, time } from './dom';
import { figureCells, healthChart, showHealth, waitedText, type DestinationHealth } from './health';
import { draftOf, mappingOf } from './mapping-fields';
import type { Page } from './page';

/**
 * An actions destination's health, one row per mapping (each mapping's URL is attempted, recorded
 * and paused like a webhook's): success rate, p50/p95, the last error, the 24-hour chart, whether
 * it is switched off, held (the destination paused) or under backpressure, and the same controls a
 * webhook URL has: clear its backpressure, switch it off or back on.
 */
export async function mappingHealthPanel(destination: Destination & { mappings: Mapping[] }, into: HTMLElement, page: Page, reload: () => Promise<void>): Promise<void> {
  const path = `/admin/destinations/${encodeURIComponent(destination.id)}`;
  let health: DestinationHealth | undefined;
  let problem: string | undefined;
  try {
    health = await api<DestinationHealth>('GET', `${path}/health`);
  } catch (err) {
    problem = `Health unavailable: ${err instanceof ApiFailure ? err.message : String(err)}`;
  }
  if (page.left()) return;
  /** One operator action on a mapping: the request, then the page as it is now (or why it failed). */
  const action = (label: string, needs: RouteKey, request: () => Promise<unknown>, done: string) =>
    guarded(
      needs,
      h(
        'button',
        {
          type: 'button',
          class: 'secondary small',
          onclick: async () => {
            try {
              await request();
              await reload();
              announce(done);
            } catch (err) {
              announce(err instanceof Error ? err.message : String(err));
            }
          },
        },
        label,
      ),
    );
  // On/off is the mapping's own `enabled`, saved with the whole list as the API takes it (header
  // values sent back masked keep theirs; the backpressure the API shows beside a mapping left out).
  const switchMapping = (name: string, enabled: boolean) => () =>
    api('PATCH', path, { mappings: destination.mappings.map((m) => ({ ...mappingOf(draftOf(m)), ...(m.name === name && { enabled }) })) });
  const rows = destination.mappings.map((mapping, index) => {
    const stats = health?.mappings?.find((m) => m.name === mapping.name);
    const pressure = stats?.backpressure ?? mapping.backpressure;
    return h(
      'tr',
      { 'data-mapping-name': mapping.name },
      h('td', {}, String(index + 1)),
      h('td', { class: 'mapping-name' }, mapping.name, h('div', { class: 'muted' }, h('code', {}, stats?.url ?? mapping.settings.url))),
      h(
        'td',
        { class: 'state' },
        mapping.enabled ? badge('on', 'ok') : badge('off'),
        // Hold is the destination's: while it is paused every mapping's messages wait, none is lost.
        destination.paused && mapping.enabled && badge('held', 'paused'),
        destination.paused && mapping.enabled && h('div', { class: 'muted held' }, 'until Resume (the destination is paused)'),
        pressure && badge('backpressure'),
        pressure && h('div', { class: 'muted backpressure' }, `${pressure.reason}: nothing is sent to it until `, time(pressure.until)),
        // The operator ends the pause; the messages held for it send at once.
        pressure &&
          action(
            'Clear backpressure',
            'DELETE /admin/destinations/:id/mappings/:name/backpressure',
            () => api('DELETE', `${path}/mappings/${encodeURIComponent(mapping.name)}/backpressure`),
            'Backpressure cleared; held messages are sent now',
          ),
        ' ',
        action(
          mapping.enabled ? 'Switch off' : 'Switch on',
          'PATCH /admin/destinations/:id',
          switchMapping(mapping.name, !mapping.enabled),
          mapping.enabled ? `Mapping ${mapping.name} switched off` : `Mapping ${mapping.name} switched on`,
        ),
      ),
      ...figureCells(stats),
      h('td', { class: 'waited' }, stats ? `held ${waitedText(stats.lastDay.waited.heldMs)} · backpressured ${waitedText(stats.lastDay.waited.backpressuredMs)}` : '–'),
      h('td', {}, stats ? healthChart(stats.series, `Mapping ${mapping.name}, last 24 h: success rate (bars) and p95 latency (line)`) : '–'),
    );
  });
  showHealth(into, problem, health, 'mapping-health', ['#', 'Mapping and URL', 'State', 'Success (24 h)', 'p50 / p95', 'Last error', 'Waited (24 h)', 'Last 24 h'], rows);
}
