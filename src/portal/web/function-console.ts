import { formFor } from './access';
import { api, ApiFailure, type FunctionItem } from './api';
import { badge, field, h, replace } from './dom';

/** What POST /admin/functions/:id/test answers: the run's outcome, its console output and the requests it made. */
interface TestRun {
  status: 'SUCCESS' | 'ERROR';
  result?: unknown;
  error?: { type: string; message: string };
  logs: string[];
  requests: { method: string; url: string; status: number; durationMs: number }[];
  durationMs: number;
}

/** A starting input of the function's kind, as Segment's editor offers one. */
const SAMPLE_EVENT = { type: 'track', event: 'Order Completed', userId: 'user-42', properties: { total: 30 } };
const SAMPLE_REQUEST = { headers: { 'content-type': 'application/json' }, body: { event: 'Order Completed', userId: 'user-42' } };

/** A JSON textarea's value, or a 4xx-like line naming the field. */
function parsed(name: string, text: string): { value: unknown } | { rule: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { rule: `${name}: is not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
}

function shownRun(run: TestRun): HTMLElement[] {
  return [
    h('p', {}, badge(run.status === 'SUCCESS' ? 'success' : 'failed'), ` in ${run.durationMs} ms`),
    run.error ? h('pre', { class: 'error', 'data-out': 'error' }, `${run.error.type}: ${run.error.message}`) : h('pre', { 'data-out': 'result' }, JSON.stringify(run.result ?? null, null, 2)),
    h('h3', {}, 'Console'),
    run.logs.length === 0 ? h('p', { class: 'muted' }, 'Nothing logged.') : h('pre', { 'data-out': 'logs' }, run.logs.join('\n')),
    h('h3', {}, 'Requests'),
    run.requests.length === 0
      ? h('p', { class: 'muted' }, 'No fetch calls.')
      : h('table', { class: 'requests' }, h('tbody', {}, ...run.requests.map((r) => h('tr', {}, h('td', {}, r.method), h('td', {}, h('code', {}, r.url)), h('td', {}, String(r.status)), h('td', { class: 'count' }, `${r.durationMs} ms`))))),
  ];
}

/**
 * The test console: an event (a request, for a source function) and settings run on the latest
 * version for real, its fetch calls included; nothing is delivered or ingested. Its requests are
 * real, so a token without destinations:write sees why it cannot run it instead of the form.
 */
export function functionConsole(fn: FunctionItem): HTMLElement {
  const isSource = fn.resourceType === 'SOURCE';
  const inputName = isSource ? 'request' : 'event';
  const input = h('textarea', { name: inputName, rows: 8, cols: 80, spellcheck: false }, JSON.stringify(isSource ? SAMPLE_REQUEST : SAMPLE_EVENT, null, 2));
  const settings = h('textarea', { name: 'settings', rows: 3, cols: 80, spellcheck: false }, '{}');
  const output = h('div', { class: 'test-run', role: 'status' });
  const form = h(
    'form',
    {
      'aria-label': 'Test the function',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const given = parsed(inputName, input.value);
        const values = parsed('settings', settings.value);
        if ('rule' in given || 'rule' in values) {
          replace(output, h('p', { class: 'error', role: 'alert' }, 'rule' in given ? given.rule : (values as { rule: string }).rule));
          return;
        }
        replace(output, h('p', { class: 'muted' }, 'Running…'));
        try {
          const run = await api<TestRun>('POST', `/admin/functions/${encodeURIComponent(fn.id)}/test`, { [inputName]: given.value, settings: values.value });
          replace(output, ...shownRun(run));
        } catch (err) {
          replace(output, h('p', { class: 'error', role: 'alert' }, err instanceof ApiFailure ? `${err.status}: ${err.message}` : String(err)));
        }
      },
    },
    field(isSource ? 'Request (headers, body, url)' : 'Event', input),
    field('Settings', settings),
    h('button', { type: 'submit' }, 'Run'),
  );
  return h('div', {}, formFor('POST /admin/functions/:id/test', 'Testing this function', () => form), output);
}
