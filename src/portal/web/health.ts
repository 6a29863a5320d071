import { guarded, type RouteKey } from './access';
import { api, ApiFailure, type Destination } from './api';
import { announce, badge, h, replace, time } from './dom';
import type { Page } from './page';
// Types only (erased in the bundle): the health route's shapes, as the server defines them.
import type { HealthPoint, HealthTotals as Totals } from '../../delivery/webhook-health';

export type { HealthPoint };

/** One webhook URL's health as GET /admin/destinations/:id/health reports it. */
export interface WebhookHealth {
  index: number;
  url: string;
  disabled?: { reason: string; at: string };
  backpressure?: { until: string; reason: string };
  lastHour: Totals;
  lastDay: Totals;
  lastError?: { reason: string; at: string };
  series: HealthPoint[];
}

/** One mapping's health (an actions destination): its URL's figures and backpressure, by mapping name. */
export interface MappingHealth {
  name: string;
  url: string;
  backpressure?: { until: string; reason: string };
  lastHour: Totals;
  lastDay: Totals;
  lastError?: { reason: string; at: string };
  series: HealthPoint[];
}

export interface DestinationHealth {
  destinationId: string;
  at: string;
  stepMinutes: number;
  flow: { paused: boolean; pausedAt?: string; maxRequestsPerSecond: number | null; lastHour: Totals['waited']; lastDay: Totals['waited'] };
  webhooks: WebhookHealth[];
  mappings?: MappingHealth[];
}

/** A waited time for people: `–` for none, else seconds, minutes or hours. */
export function waitedText(value: number): string {
  if (value <= 0) return '–';
  if (value < 60_000) return `${Math.round(value / 100) / 10} s`;
  if (value < 3_600_000) return `${Math.round(value / 6_000) / 10} min`;
  return `${Math.round(value / 360_000) / 10} h`;
}

/** Rate limit and hold now, and the time messages waited without sending over the last hour and day. */
function flowSummary(health: DestinationHealth): HTMLElement {
  const { flow } = health;
  const waited = (w: Totals['waited']) => `throttled ${waitedText(w.throttledMs)} · held ${waitedText(w.heldMs)} · backpressured ${waitedText(w.backpressuredMs)}`;
  return h(
    'p',
    { class: 'flow muted' },
    'Waited without sending (summed over messages): last hour ',
    h('span', { class: 'waited-hour' }, waited(flow.lastHour)),
    '; last 24 h ',
    h('span', { class: 'waited-day' }, waited(flow.lastDay)),
    '.',
  );
}

const percent = (rate: number | null | undefined) => (rate === null || rate === undefined ? '–' : `${Math.round(rate * 1000) / 10} %`);
const ms = (value: number | null | undefined) => (value === null || value === undefined ? '–' : `${Math.round(value)} ms`);

/**
 * Success rate (bars, left axis 0–100 %) and p95 latency (line, scaled to the largest value) per
 * step (15 minutes) over the last 24 h, drawn as inline SVG: no chart library, nothing from elsewhere.
 */
export function healthChart(series: HealthPoint[], label: string): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const plot = { left: 30, right: 4, top: 4, bottom: 14 };
  const width = plot.left + Math.max(series.length, 1) * 3 + plot.right;
  const height = 70;
  const inner = height - plot.top - plot.bottom;
  const base = height - plot.bottom;
  const node = (tag: string, attributes: Record<string, string | number>, text?: string) => {
    const element = document.createElementNS(ns, tag);
    for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
    if (text !== undefined) element.textContent = text;
    return element;
  };
  const svg = node('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart', role: 'img' }) as SVGSVGElement;
  svg.appendChild(node('title', {}, label));
  for (const [rate, text] of [[1, '100 %'], [0.5, '50 %'], [0, '0 %']] as const) {
    const y = base - rate * inner;
    svg.appendChild(node('line', { x1: plot.left, x2: width - plot.right, y1: y, y2: y, stroke: '#e3e6ec' }));
    svg.appendChild(node('text', { x: plot.left - 3, y: y + 3, 'text-anchor': 'end', 'font-size': 8, fill: '#6b7385' }, text));
  }
  svg.appendChild(node('text', { x: plot.left, y: height - 2, 'font-size': 8, fill: '#6b7385' }, '24 h ago'));
  svg.appendChild(node('text', { x: width - plot.right, y: height - 2, 'font-size': 8, fill: '#6b7385', 'text-anchor': 'end' }, 'now'));
  const maxLatency = Math.max(1, ...series.map((p) => p.p95Ms ?? 0));
  const points: string[] = [];
  series.forEach((point, i) => {
    const x = plot.left + i * 3;
    if (point.attempts > 0) {
      const rate = point.successes / point.attempts;
      // A step with attempts and no success still shows: a red tick on the baseline.
      const barHeight = Math.max(rate * inner, 3);
      const bar = node('rect', { x, width: 2.5, y: (base - barHeight).toFixed(1), height: barHeight.toFixed(1), fill: rate >= 0.99 ? '#2a9d4b' : rate >= 0.5 ? '#e0a800' : '#c62828', 'data-rate': rate.toFixed(3) });
      bar.appendChild(node('title', {}, `${new Date(point.start).toLocaleTimeString()}: ${point.successes}/${point.attempts} succeeded, p50 ${ms(point.p50Ms)}, p95 ${ms(point.p95Ms)}`));
      svg.appendChild(bar);
    }
    if (point.p95Ms !== null) {
      const y = (base - (point.p95Ms / maxLatency) * inner).toFixed(1);
      points.push(`${x + 1.25},${y}`);
      svg.appendChild(node('circle', { cx: x + 1.25, cy: y, r: 2, fill: '#2f5bd3', class: 'latency' }));
    }
  });
  if (points.length > 1) svg.appendChild(node('polyline', { points: points.join(' '), fill: 'none', stroke: '#2f5bd3', 'stroke-width': 1.2, class: 'latency' }));
  svg.appendChild(node('text', { x: width - plot.right, y: plot.top + 7, 'font-size': 8, fill: '#2f5bd3', 'text-anchor': 'end' }, `p95 max ${ms(maxLatency === 1 && !points.length ? null : maxLatency)}`));
  return svg;
}

/** The destination's webhook URLs with their health (when the server reports it) and a re-enable button for a URL switched off. */
export async function healthPanel(destination: Destination, into: HTMLElement, page: Page, reload: () => Promise<void>): Promise<void> {
  let health: DestinationHealth | undefined;
  let problem: string | undefined;
  try {
    health = await api<DestinationHealth>('GET', `/admin/destinations/${encodeURIComponent(destination.id)}/health`);
  } catch (err) {
    problem = `Health unavailable: ${err instanceof ApiFailure ? err.message : String(err)}`;
  }
  if (page.left()) return;
  // One operator action on a URL: the request, then the page as it is now (or why it failed).
  const action = (label: string, method: string, route: string, done: string, needs: RouteKey) =>
    guarded(needs, h(
      'button',
      {
        type: 'button',
        onclick: async () => {
          try {
            await api(method, `/admin/destinations/${encodeURIComponent(destination.id)}/webhooks/${route}`);
            announce(done);
            await reload();
          } catch (err) {
            announce(err instanceof Error ? err.message : String(err));
          }
        },
      },
      label,
    ));
  const rows = destination.webhooks.map((webhook, index) => {
    const stats = health?.webhooks.find((w) => w.index === index);
    const disabled = stats?.disabled ?? webhook.disabled;
    const pressure = !disabled && (stats?.backpressure ?? webhook.backpressure);
    return h(
      'tr',
      { 'data-webhook-index': index },
      h('td', {}, String(index + 1)),
      h('td', {}, h('code', {}, webhook.url)),
      h('td', {}, webhook.headerNames.length ? webhook.headerNames.join(', ') : '–'),
      h(
        'td',
        {},
        disabled ? badge('disabled') : badge('on', 'ok'),
        disabled && h('div', { class: 'muted' }, disabled.reason, ' · ', time(disabled.at)),
        pressure && badge('backpressure'),
        pressure && h('div', { class: 'muted backpressure' }, `${pressure.reason}: nothing is sent to it until `, time(pressure.until)),
        // The operator ends the pause; the messages held for it send at once.
        pressure && action('Clear backpressure', 'DELETE', `${index}/backpressure`, 'Backpressure cleared; held messages are sent now', 'DELETE /admin/destinations/:id/webhooks/:index/backpressure'),
        disabled && action('Re-enable', 'POST', `${index}/enable`, 'URL switched back on', 'POST /admin/destinations/:id/webhooks/:index/enable'),
      ),
      ...figureCells(stats),
      h('td', {}, stats ? healthChart(stats.series, `Webhook ${index + 1}, last 24 h: success rate (bars) and p95 latency (line)`) : '–'),
    );
  });
  showHealth(into, problem, health, 'webhooks', ['#', 'URL', 'Header names', 'State', 'Success (24 h)', 'p50 / p95', 'Last error', 'Last 24 h'], rows);
}

/** One lane's (a webhook URL's or a mapping's) figures as cells: the day's success rate and the last hour's, p50/p95, the last error. */
export function figureCells(stats: Pick<WebhookHealth, 'lastHour' | 'lastDay' | 'lastError'> | undefined): HTMLTableCellElement[] {
  const lastError = stats?.lastError;
  return [
    h('td', { class: 'success-rate' }, stats ? percent(stats.lastDay.successRate) : '–', stats && h('div', { class: 'muted' }, `${stats.lastDay.successes}/${stats.lastDay.attempts} · last hour ${percent(stats.lastHour.successRate)}`)),
    h('td', { class: 'p50-p95' }, stats ? `${ms(stats.lastDay.p50Ms)} / ${ms(stats.lastDay.p95Ms)}` : '–'),
    h('td', { class: 'last-error' }, lastError ? h('span', {}, lastError.reason, h('div', { class: 'muted' }, time(lastError.at))) : '–'),
  ];
}

/** A health panel's content: why health could not be read (if so), the time waited, and the table of lanes. */
export function showHealth(into: HTMLElement, problem: string | undefined, health: DestinationHealth | undefined, tableClass: string, headings: string[], rows: HTMLElement[]): void {
  replace(
    into,
    problem && h('p', { class: 'muted' }, problem),
    health && flowSummary(health),
    h('table', { class: tableClass }, h('thead', {}, h('tr', {}, ...headings.map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, ...rows)),
  );
}
