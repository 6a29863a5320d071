import { api, ApiFailure, type Destination } from './api';
import { announce, badge, h, replace, time } from './dom';
import type { Page } from './page';

/** One webhook URL's health as GET /admin/destinations/:id/health reports it. */
export interface WebhookHealth {
  webhookIndex: number;
  url: string;
  attempts?: number;
  successes?: number;
  failures?: number;
  successRate?: number | null;
  p50Ms?: number | null;
  p95Ms?: number | null;
  lastError?: { at: string; httpStatus?: number; error?: string; message?: string } | null;
  disabled?: { reason: string; at: string } | null;
  series?: { at: string; attempts: number; successes: number; p95Ms?: number | null; p50Ms?: number | null }[];
}

export interface DestinationHealth {
  webhooks: WebhookHealth[];
}

const percent = (rate: number | null | undefined) => (rate === null || rate === undefined ? '–' : `${Math.round(rate * 1000) / 10} %`);
const ms = (value: number | null | undefined) => (value === null || value === undefined ? '–' : `${Math.round(value)} ms`);

/**
 * Success rate (bars, left axis 0–100 %) and p95 latency (line, scaled to the largest value) per
 * hour bucket over the last 24 h, drawn as inline SVG: no chart library, nothing from elsewhere.
 */
export function healthChart(series: NonNullable<WebhookHealth['series']>, label: string): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const width = 240;
  const height = 60;
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  const title = document.createElementNS(ns, 'title');
  title.textContent = label;
  svg.appendChild(title);
  const n = Math.max(series.length, 1);
  const step = width / n;
  const maxLatency = Math.max(1, ...series.map((b) => b.p95Ms ?? 0));
  const points: string[] = [];
  series.forEach((bucket, i) => {
    if (bucket.attempts > 0) {
      const rate = bucket.successes / bucket.attempts;
      const bar = document.createElementNS(ns, 'rect');
      bar.setAttribute('x', (i * step + 0.5).toFixed(1));
      bar.setAttribute('width', Math.max(step - 1, 1).toFixed(1));
      bar.setAttribute('y', (height - rate * (height - 4)).toFixed(1));
      bar.setAttribute('height', (rate * (height - 4)).toFixed(1));
      bar.setAttribute('fill', rate >= 0.99 ? '#2a9d4b' : rate >= 0.5 ? '#e0a800' : '#c62828');
      // A bucket with attempts and no success still shows: a red tick at the bottom.
      if (rate === 0) {
        bar.setAttribute('y', String(height - 3));
        bar.setAttribute('height', '3');
      }
      const tip = document.createElementNS(ns, 'title');
      tip.textContent = `${new Date(bucket.at).toLocaleTimeString()}: ${bucket.successes}/${bucket.attempts} succeeded, p95 ${ms(bucket.p95Ms)}`;
      bar.appendChild(tip);
      bar.setAttribute('data-rate', rate.toFixed(3));
      svg.appendChild(bar);
    }
    if (bucket.p95Ms !== null && bucket.p95Ms !== undefined) points.push(`${(i * step + step / 2).toFixed(1)},${(height - 2 - (bucket.p95Ms / maxLatency) * (height - 6)).toFixed(1)}`);
  });
  if (points.length > 0) {
    const line = document.createElementNS(ns, 'polyline');
    line.setAttribute('points', points.join(' '));
    line.setAttribute('fill', 'none');
    line.setAttribute('stroke', '#2f5bd3');
    line.setAttribute('stroke-width', '1.5');
    line.setAttribute('class', 'latency');
    svg.appendChild(line);
  }
  return svg;
}

/** The destination's webhook URLs with their health (when the server reports it) and a re-enable button for a URL switched off. */
export async function healthPanel(destination: Destination, into: HTMLElement, page: Page, reload: () => Promise<void>): Promise<void> {
  let health: DestinationHealth | undefined;
  let problem: string | undefined;
  try {
    health = await api<DestinationHealth>('GET', `/admin/destinations/${encodeURIComponent(destination.id)}/health`);
  } catch (err) {
    problem = err instanceof ApiFailure && err.status === 404 ? 'This server does not report webhook health.' : `Health unavailable: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (page.left()) return;
  const rows = destination.webhooks.map((webhook, index) => {
    const stats = health?.webhooks.find((w) => w.webhookIndex === index) ?? health?.webhooks[index];
    const disabled = stats?.disabled ?? webhook.disabled;
    const lastError = stats?.lastError;
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
        disabled &&
          h(
            'button',
            {
              type: 'button',
              onclick: async () => {
                try {
                  await api('POST', `/admin/destinations/${encodeURIComponent(destination.id)}/webhooks/${index}/enable`);
                  announce('URL switched back on');
                  await reload();
                } catch (err) {
                  announce(err instanceof Error ? err.message : String(err));
                }
              },
            },
            'Re-enable',
          ),
      ),
      h('td', { class: 'success-rate' }, stats ? percent(stats.successRate) : '–', stats?.attempts !== undefined && h('div', { class: 'muted' }, `${stats.successes ?? 0}/${stats.attempts} attempts`)),
      h('td', {}, stats ? `${ms(stats.p50Ms)} / ${ms(stats.p95Ms)}` : '–'),
      h('td', { class: 'last-error' }, lastError ? [lastError.httpStatus ? `HTTP ${lastError.httpStatus}` : lastError.error ?? lastError.message ?? 'error', ' · ', new Date(lastError.at).toLocaleString()].join('') : '–'),
      h('td', {}, stats?.series ? healthChart(stats.series, `Success rate and p95 latency of webhook ${index + 1}, last 24 h`) : '–'),
    );
  });
  replace(
    into,
    problem && h('p', { class: 'muted' }, problem),
    h(
      'table',
      { class: 'webhooks' },
      h('thead', {}, h('tr', {}, ...['#', 'URL', 'Header names', 'State', 'Success (24 h)', 'p50 / p95', 'Last error', 'Last 24 h'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, ...rows),
    ),
  );
}
