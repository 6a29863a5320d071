import { guarded } from './access';
import { api, type Destination, type Mapping } from './api';
import { announce, field, h, replace } from './dom';
import { nodeEditor, shapeButton } from './mapping-editor';
import { blankDraft, draftOf, mappingOf, METHODS, type HeaderRow, type MappingDraft } from './mapping-fields';

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

/** At most this many mappings per destination (the API's limit; the form offers no sixth). */
const MAX_MAPPINGS = 5;

/** Parses a JSON text area, naming it in the error (never echoing its content: it may hold header values). */
export function parsedJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/** An input bound to one property of a draft row: typing changes the draft, nothing else. */
function bound<T, K extends keyof T & string>(row: T, key: K, attributes: Record<string, string | number | boolean> = {}, tag: 'input' | 'textarea' = 'input'): HTMLInputElement | HTMLTextAreaElement {
  const input = h(tag, { ...attributes, spellcheck: 'false' });
  input.value = String(row[key]);
  input.addEventListener('input', () => ((row as Record<string, unknown>)[key] = input.value));
  return input;
}

/**
 * An actions destination's mappings as a form per mapping (name, trigger, method, URL,
 * headers, and the data as nested fields and directives, mapping-editor.ts), raw JSON one toggle away, and the preview beside
 * them rendering what is in the editor (the draft), not what is saved. Header values come back
 * masked and keep their saved value when sent back masked.
 */
export function mappingsPanel(destination: Destination & { mappings: Mapping[] }, reload: () => Promise<void>): HTMLElement {
  const path = `/admin/destinations/${encodeURIComponent(destination.id)}`;
  let drafts: MappingDraft[] = destination.mappings.map(draftOf);
  let asJson = false;
  const editor = h('div', { class: 'mapping-editor' });
  const jsonInput = h('textarea', { name: 'mappings', rows: 18, cols: 70, spellcheck: false });
  const toggle = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Edit as JSON');
  const eventInput = h('textarea', { name: 'event', rows: 10, cols: 50, spellcheck: false }, SAMPLE_EVENT);
  const errors = h('p', { class: 'error', role: 'alert' });
  const output = h('pre', { class: 'mapping-preview', 'aria-live': 'polite' });

  /** The mappings in the editor, from whichever view is showing. */
  const current = (): unknown => (asJson ? parsedJson(jsonInput.value, 'Mappings') : drafts.map(mappingOf));

  function headerRow(draft: MappingDraft, row: HeaderRow, index: number): HTMLElement {
    return h(
      'div',
      { class: 'row header-row' },
      field('Header name', bound(row, 'name', { size: 18 })),
      field('Header value', bound(row, 'value', { size: 30, autocomplete: 'off' })),
      shapeButton('Remove', () => (draft.headers.splice(index, 1), drawForm()), `Remove header ${index + 1}`),
    );
  }

  function mappingForm(draft: MappingDraft, index: number): HTMLElement {
    const enabled = h('input', { type: 'checkbox', name: 'enabled', checked: draft.enabled });
    enabled.addEventListener('change', () => (draft.enabled = enabled.checked));
    const method = h('select', { name: 'method' }, ...[...new Set([...METHODS, draft.method])].map((m) => h('option', { value: m, selected: m === draft.method }, m)));
    method.addEventListener('change', () => (draft.method = method.value));
    return h(
      'fieldset',
      { class: 'mapping', 'data-mapping-index': index, 'aria-label': `Mapping ${index + 1}` },
      h('legend', {}, `Mapping ${index + 1}`),
      h(
        'div',
        { class: 'row' },
        field('Name', bound(draft, 'name', { size: 24, maxlength: 100 })),
        h('label', {}, 'Enabled', enabled),
        field('Trigger (FQL)', bound(draft, 'trigger', { size: 50 })),
      ),
      h('div', { class: 'row' }, field('Method', method), field('URL', bound(draft, 'url', { size: 60, type: 'url' }))),
      h('h4', {}, 'Headers'),
      ...draft.headers.map((row, i) => headerRow(draft, row, i)),
      shapeButton('Add header', () => (draft.headers.push({ name: '', value: '' }), drawForm())),
      h('h4', {}, 'Body (data): fields, or one directive for all of it'),
      h('div', { class: 'mapping-data' }, nodeEditor(draft.data, (node) => (draft.data = node!))),
      shapeButton('Remove mapping', () => (drafts.splice(index, 1), drawForm()), `Remove mapping ${index + 1}`),
    );
  }

  function drawForm(): void {
    replace(
      editor,
      ...drafts.map(mappingForm),
      drafts.length < MAX_MAPPINGS && shapeButton('Add mapping', () => (drafts.push(blankDraft(drafts.length + 1)), drawForm())),
    );
  }

  /** Form ↔ JSON: the JSON is what the form holds; back to the form only when the JSON parses to a list. */
  toggle.addEventListener('click', () => {
    replace(errors);
    if (!asJson) {
      let mappings: unknown;
      try {
        mappings = current();
      } catch (err) {
        return replace(errors, (err as Error).message);
      }
      jsonInput.value = JSON.stringify(mappings, null, 2);
      asJson = true;
      replace(editor, field('Mappings (JSON)', jsonInput));
    } else {
      let parsed: unknown;
      try {
        parsed = parsedJson(jsonInput.value, 'Mappings');
        if (!Array.isArray(parsed)) throw new Error('Mappings: the JSON must be a list of mappings');
      } catch (err) {
        return replace(errors, (err as Error).message);
      }
      drafts = parsed.map(draftOf);
      asJson = false;
      drawForm();
    }
    toggle.textContent = asJson ? 'Edit as form' : 'Edit as JSON';
    toggle.setAttribute('aria-pressed', String(asJson));
  });

  const save = async (event: Event) => {
    event.preventDefault();
    replace(errors);
    try {
      await api('PATCH', path, { mappings: current() });
      await reload();
      announce('Mappings saved');
    } catch (err) {
      replace(errors, err instanceof Error ? err.message : String(err));
    }
  };
  const preview = async () => {
    replace(errors);
    try {
      // The draft in the editor, rendered by the API as it would be sent; nothing saved, nothing sent.
      const result = await api<{ mappings: unknown[] }>('POST', `${path}/mappings/preview`, { event: parsedJson(eventInput.value, 'Event'), mappings: current() });
      replace(output, JSON.stringify(result.mappings, null, 2));
    } catch (err) {
      replace(errors, err instanceof Error ? err.message : String(err));
    }
  };
  drawForm();
  return h(
    'div',
    { class: 'mappings' },
    h(
      'div',
      { class: 'side-by-side' },
      h(
        'form',
        { 'aria-label': 'Mappings', class: 'mappings-form', onsubmit: save },
        h('p', {}, toggle),
        editor,
        guarded('PATCH /admin/destinations/:id', h('button', { type: 'submit' }, 'Save mappings')),
      ),
      h(
        'div',
        { class: 'preview' },
        field('Event to preview (JSON)', eventInput),
        h('button', { type: 'button', class: 'secondary', onclick: () => void preview() }, 'Preview the draft'),
        h('p', { class: 'muted' }, 'Renders the mappings as they are in the editor, saved or not; sends nothing.'),
        output,
      ),
    ),
    errors,
  );
}
