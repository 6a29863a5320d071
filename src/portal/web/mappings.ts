import { api, type Destination, type Mapping } from './api';
import { announce, field, h, replace } from './dom';

/** A starting point for a new actions destination: Segment's Webhooks (Actions) shape, one mapping. */
export const SAMPLE_MAPPINGS = JSON.stringify(
  [
    {
      name: 'Orders to Slack',
      enabled: true,
      trigger: 'type = "track" and event = "Order Completed"',
      settings: { url: 'https://hooks.slack.com/services/T000/B000/XXXX', method: 'POST', headers: {}, data: { text: { '@template': 'Order {{properties.orderId}} by {{userId}}' } } },
    },
  ],
  null,
  2,
);

const SAMPLE_EVENT = JSON.stringify({ type: 'track', event: 'Order Completed', userId: 'u-1', properties: { orderId: 'o-1', total: 42 } }, null, 2);

/** Parses a JSON text area, naming it in the error (never echoing its content: it may hold header values). */
export function parsedJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Issue 33: an actions destination's mappings edited as JSON (Segment's Public API shape; header
 * values come back masked and stay as saved when sent back masked), with the preview beside it:
 * what each mapping would send for an event, rendered by the API, nothing sent.
 */
export function mappingsPanel(destination: Destination & { mappings: Mapping[] }, reload: () => Promise<void>): HTMLElement {
  const path = `/admin/destinations/${encodeURIComponent(destination.id)}`;
  const mappingsInput = h('textarea', { name: 'mappings', rows: 16, cols: 60, spellcheck: false }, JSON.stringify(destination.mappings, null, 2));
  const eventInput = h('textarea', { name: 'event', rows: 10, cols: 50, spellcheck: false }, SAMPLE_EVENT);
  const errors = h('p', { class: 'error', role: 'alert' });
  const output = h('pre', { class: 'mapping-preview', 'aria-live': 'polite' });
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      await api('PATCH', path, { mappings: parsedJson(mappingsInput.value, 'Mappings') });
      await reload();
      announce('Mappings saved');
    } catch (err) {
      replace(errors, err instanceof Error ? err.message : String(err));
    }
  };
  const preview = async () => {
    try {
      const result = await api<{ mappings: unknown[] }>('POST', `${path}/mappings/preview`, { event: parsedJson(eventInput.value, 'Event') });
      replace(output, JSON.stringify(result.mappings, null, 2));
      replace(errors);
    } catch (err) {
      replace(errors, err instanceof Error ? err.message : String(err));
    }
  };
  return h(
    'div',
    { class: 'mappings' },
    h(
      'div',
      { class: 'side-by-side' },
      h('form', { 'aria-label': 'Mappings', onsubmit: save }, field('Mappings (JSON)', mappingsInput), h('button', { type: 'submit' }, 'Save mappings')),
      h(
        'div',
        { class: 'preview' },
        field('Event to preview (JSON)', eventInput),
        h('button', { type: 'button', class: 'secondary', onclick: () => void preview() }, 'Preview saved mappings'),
        output,
      ),
    ),
    errors,
  );
}
