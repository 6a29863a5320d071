import { guarded, may } from './access';
import { api, ApiFailure, type Destination } from './api';
import { badge, field, h, replace } from './dom';

const TEST_ROUTE = 'POST /admin/destinations/:id/test';

/** POST /admin/destinations/:id/test's answer. */
interface TestAnswer {
  status: 'attempted' | 'pending' | 'filtered';
  sourceId: string;
  messageId: string;
  attempt?: { outcome: 'success' | 'retry' | 'permanent'; httpStatus?: number; durationMs?: number; error?: string; webhookIndex: number; url?: string; mapping?: string };
  filtered?: { reason: string; id?: string; message: string };
}

/** The answer in words: the attempt's outcome, response status, duration and error, or the rule that stopped it. */
function resultOf(answer: TestAnswer): HTMLElement {
  const delivery = h('a', { href: `#/deliveries/${encodeURIComponent(answer.sourceId)}/${encodeURIComponent(answer.messageId)}` }, 'its delivery');
  if (answer.status === 'filtered') return h('p', { class: 'test-result error', 'data-status': 'filtered' }, `Nothing sent: ${answer.filtered?.message ?? 'filtered'}.`);
  if (answer.status === 'pending' || !answer.attempt) return h('p', { class: 'test-result', 'data-status': 'pending' }, 'Sent; no attempt had ended when the wait ran out. The delivery goes on: see ', delivery, '.');
  const { outcome, httpStatus, durationMs, error, url, mapping } = answer.attempt;
  return h(
    'p',
    { class: 'test-result', 'data-status': 'attempted', 'data-outcome': outcome },
    badge(outcome, outcome === 'success' ? 'delivered' : 'failed'),
    ' ',
    h('span', { class: 'http-status' }, httpStatus === undefined ? 'no response' : `HTTP ${httpStatus}`),
    durationMs === undefined ? '' : h('span', { class: 'duration' }, ` in ${durationMs} ms`),
    mapping ? ` (mapping ${mapping})` : url ? ` to ${url}` : '',
    error ? h('span', { class: 'error attempt-error' }, ` ${error}`) : '',
    ' · ',
    delivery,
  );
}

/**
 * "Send test event": a real, signed delivery of a sample (or the event typed in) to this destination
 * alone, through its rules and mapping; the first attempt is shown beside the button. A token
 * without destinations:write sees the button disabled, the scope named.
 */
export function testEventForm(destination: Destination): HTMLElement {
  const button = h('button', { type: 'submit', class: 'secondary' }, 'Send test event');
  if (!may(TEST_ROUTE)) return h('p', { class: 'test-event' }, guarded(TEST_ROUTE, button));
  const eventInput = h('textarea', { name: 'event', rows: 3, cols: 60, placeholder: '{"type": "track", "event": "Order Completed", "userId": "u1"}' });
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const result = h('div', { class: 'test-results', role: 'status' });
  const showProblem = (message: string) => {
    problem.textContent = message;
    problem.hidden = false;
  };
  return h(
    'form',
    {
      class: 'test-event',
      'aria-label': 'Send test event',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        problem.hidden = true;
        const text = eventInput.value.trim();
        let body: Record<string, unknown> = {};
        if (text) {
          try {
            body = { event: JSON.parse(text) as unknown };
          } catch {
            return showProblem('event: is not JSON');
          }
        }
        button.disabled = true;
        replace(result, h('p', { class: 'muted' }, 'Sending…'));
        try {
          replace(result, resultOf(await api<TestAnswer>('POST', `/admin/destinations/${encodeURIComponent(destination.id)}/test`, body)));
        } catch (err) {
          replace(result);
          showProblem(err instanceof ApiFailure ? err.message : String(err));
        } finally {
          button.disabled = false;
        }
      },
    },
    field('Event (JSON; empty sends a sample "Switchyard Test Event" track)', eventInput),
    problem,
    button,
    result,
  );
}
