import { guarded, may } from './access';
import { api, ApiFailure, type Destination } from './api';
import { announce, badge, field, h, replace } from './dom';
import type { Page } from './page';
/** An action in Segment's Public API shape, as the API checks it (src/rules/destination-filters.ts). */
type FilterAction = { type: string } & Record<string, unknown>;

/** A saved filter as GET /admin/destinations/:id/filters lists it. */
interface Filter {
  id: string;
  title: string;
  description?: string;
  enabled: boolean;
  if: string;
  actions: FilterAction[];
  createdAt: string;
  updatedAt: string;
}

interface Preview {
  delivered: boolean;
  body: Record<string, unknown> | null;
  matched: string[];
  /** The filter that dropped (`filters`) or sampled out (`sampled`) the event; null when delivered (absent from an API before it). */
  filter?: { id: string | null; title: string; reason: 'filters' | 'sampled' } | null;
}

/** The filter the preview names as having stopped the event, in words. */
function stoppedByText(stopped: Preview['filter']): string | undefined {
  if (!stopped) return undefined;
  return `${stopped.reason === 'sampled' ? 'Sampled out' : 'Dropped'} by ${stopped.title}.`;
}

const FORM_FIELDS = ['title', 'description', 'if', 'actions'] as const;

/**
 * The form field a 400 names: its message starts with the field (`if: at column 3: …`,
 * `actions[0].fields: …`); undefined when it names none of the form's.
 */
function erroredField(message: string): (typeof FORM_FIELDS)[number] | undefined {
  const named = message
    .split(':')[0]
    .replace(/^body\//, '')
    .split(/[[./]/)[0];
  return FORM_FIELDS.find((name) => name === named);
}

const sampleEvent = JSON.stringify({ type: 'track', event: 'Order Completed', userId: 'u-1', properties: { total: 42, email: 'someone@example.com' } }, null, 2);

/** A destination's filters: list, add, edit, switch on/off, delete, and preview an event under them. */
export async function filtersPanel(destination: Destination, into: HTMLElement, page: Page, reload: () => Promise<void>): Promise<void> {
  const path = `/admin/destinations/${encodeURIComponent(destination.id)}/filters`;
  let filters: Filter[];
  try {
    filters = (await api<{ filters: Filter[] }>('GET', path)).filters;
  } catch (err) {
    if (!page.left()) replace(into, h('p', { class: 'muted' }, `Filters unavailable: ${err instanceof ApiFailure ? err.message : String(err)}`));
    return;
  }
  if (page.left()) return;

  /** Announced once the page shows the change: the reload replaces every form on it. */
  const change = async (method: string, url: string, body: unknown, done: string) => {
    await api(method, url, body);
    await reload();
    announce(done);
  };

  let editing: Filter | undefined;
  const inputs = {
    title: h('input', { name: 'title', maxlength: 64, required: true }),
    description: h('input', { name: 'description', size: 40 }),
    if: h('textarea', { name: 'if', rows: 2, cols: 60, required: true, spellcheck: 'false' }),
    actions: h('textarea', { name: 'actions', rows: 4, cols: 60, required: true, spellcheck: 'false' }),
  };
  const enabledInput = h('input', { type: 'checkbox', name: 'enabled', checked: true });
  const errors = Object.fromEntries(FORM_FIELDS.map((name) => [name, h('span', { class: 'error field-error', id: `filter-${destination.id}-${name}-error`, role: 'alert' })])) as Record<
    (typeof FORM_FIELDS)[number],
    HTMLElement
  >;
  for (const name of FORM_FIELDS) inputs[name].setAttribute('aria-describedby', errors[name].id);
  const formError = h('p', { class: 'error', role: 'alert' });
  const submit = h('button', { type: 'submit' }, 'Add filter');
  const cancel = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => edit(undefined) }, 'Cancel');
  inputs.actions.value = JSON.stringify([{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }], null, 2);

  const clearErrors = () => {
    for (const name of FORM_FIELDS) {
      errors[name].textContent = '';
      inputs[name].removeAttribute('aria-invalid');
    }
    formError.textContent = '';
  };
  const showError = (message: string) => {
    const name = erroredField(message);
    if (!name) return void (formError.textContent = message);
    errors[name].textContent = message;
    inputs[name].setAttribute('aria-invalid', 'true');
    inputs[name].focus();
  };
  function edit(filter: Filter | undefined): void {
    editing = filter;
    clearErrors();
    inputs.title.value = filter?.title ?? '';
    inputs.description.value = filter?.description ?? '';
    inputs.if.value = filter?.if ?? '';
    if (filter) inputs.actions.value = JSON.stringify(filter.actions, null, 2);
    enabledInput.checked = filter?.enabled ?? true;
    submit.textContent = filter ? 'Save filter' : 'Add filter';
    cancel.hidden = !filter;
    if (filter) inputs.title.focus();
  }

  const form = h(
    'form',
    {
      'aria-label': 'Filter',
      class: 'filter-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        clearErrors();
        let actions: FilterAction[];
        try {
          actions = JSON.parse(inputs.actions.value) as FilterAction[];
        } catch (err) {
          return showError(`actions: not JSON (${err instanceof Error ? err.message : String(err)})`);
        }
        const description = inputs.description.value.trim();
        const body = { title: inputs.title.value.trim(), ...(description && { description }), enabled: enabledInput.checked, if: inputs.if.value.trim(), actions };
        try {
          if (editing) await change('PATCH', `${path}/${encodeURIComponent(editing.id)}`, body, `Filter ${body.title} saved`);
          else await change('POST', path, body, `Filter ${body.title} added`);
        } catch (err) {
          showError(err instanceof Error ? err.message : String(err));
        }
      },
    },
    field('Title', inputs.title),
    errors.title,
    field('Description', inputs.description),
    errors.description,
    h('label', {}, 'Enabled', enabledInput),
    field('If (FQL)', inputs.if),
    errors.if,
    field('Actions (JSON: DROP, SAMPLE {percent from 0 to 1, path}, DROP_PROPERTIES / ALLOW_PROPERTIES {fields})', inputs.actions),
    errors.actions,
    // A token without destinations:write may still draft a filter here and preview it.
    guarded('POST /admin/destinations/:id/filters', submit),
    cancel,
  );

  /** The form's filter as the preview takes it; undefined when the form holds none (no condition typed), an Error when its actions are not JSON. */
  const draftFilter = (): { title: string; if: string; actions: FilterAction[]; enabled: boolean } | undefined | Error => {
    const condition = inputs.if.value.trim();
    if (!condition) return undefined;
    try {
      return { title: inputs.title.value.trim() || 'Draft', if: condition, actions: JSON.parse(inputs.actions.value) as FilterAction[], enabled: true };
    } catch (err) {
      return new Error(`actions: not JSON (${err instanceof Error ? err.message : String(err)})`);
    }
  };
  const eventInput = h('textarea', { name: 'event', rows: 6, cols: 60, spellcheck: 'false' });
  eventInput.value = sampleEvent;
  const previewOut = h('div', { class: 'preview', 'aria-live': 'polite' });
  const previewForm = h(
    'form',
    {
      'aria-label': 'Preview an event',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        let parsed: unknown;
        try {
          parsed = JSON.parse(eventInput.value);
        } catch (err) {
          return replace(previewOut, h('p', { class: 'error', role: 'alert' }, `event: not JSON (${err instanceof Error ? err.message : String(err)})`));
        }
        // What is in the editor, when it holds a filter (a draft, saved or not); else the saved filters.
        const draft = draftFilter();
        if (draft instanceof Error) return replace(previewOut, h('p', { class: 'error', role: 'alert' }, draft.message));
        try {
          const result = await api<Preview>('POST', `${path}/preview`, { event: parsed, ...(draft && { filter: draft }) });
          replace(
            previewOut,
            h('p', { class: 'preview-of muted' }, draft ? `The filter in the form (${draft.title || 'untitled'}), as edited, not saved:` : 'The saved filters:'),
            h(
              'p',
              { class: 'preview-verdict' },
              result.delivered ? badge('delivered') : badge('not delivered', 'failed'),
              ' ',
              result.matched.length ? `Matched: ${result.matched.join(', ')}` : 'No filter matched.',
              stoppedByText(result.filter) && h('span', { class: 'stopped-by' }, ` ${stoppedByText(result.filter)}`),
            ),
            result.body && h('pre', { class: 'preview-body' }, JSON.stringify(result.body, null, 2)),
          );
        } catch (err) {
          replace(previewOut, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
        }
      },
    },
    field('Event (JSON), as a source would send it', eventInput),
    h('button', { type: 'submit' }, 'Preview'),
  );

  const rows = filters.map((filter) =>
    h(
      'tr',
      { 'data-filter-id': filter.id },
      h('td', {}, h('strong', {}, filter.title), filter.description && h('div', { class: 'muted' }, filter.description)),
      h('td', {}, filter.enabled ? badge('on') : badge('off')),
      h('td', {}, h('code', {}, filter.if)),
      h('td', {}, h('code', {}, JSON.stringify(filter.actions))),
      h(
        'td',
        {},
        h('button', { type: 'button', class: 'secondary', onclick: () => edit(filter) }, may('PATCH /admin/destinations/:id/filters/:filterId') ? 'Edit' : 'Try in the form'),
        ' ',
        guarded(
          'PATCH /admin/destinations/:id/filters/:filterId',
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => change('PATCH', `${path}/${encodeURIComponent(filter.id)}`, { enabled: !filter.enabled }, filter.enabled ? `Filter ${filter.title} switched off` : `Filter ${filter.title} switched on`),
            },
            filter.enabled ? 'Switch off' : 'Switch on',
          ),
        ),
        ' ',
        guarded(
          'DELETE /admin/destinations/:id/filters/:filterId',
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: async () => {
                if (confirm(`Delete the filter ${filter.title}?`)) await change('DELETE', `${path}/${encodeURIComponent(filter.id)}`, undefined, `Filter ${filter.title} deleted`);
              },
            },
            'Delete',
          ),
        ),
      ),
    ),
  );
  replace(
    into,
    filters.length === 0
      ? h('p', { class: 'muted' }, 'No filter: this destination gets every message its consent and the integrations object let through.')
      : h('table', { class: 'filters' }, h('thead', {}, h('tr', {}, ...['Filter', 'State', 'If', 'Actions', ''].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, ...rows)),
    form,
    formError,
    h('h4', {}, 'Preview'),
    previewForm,
    previewOut,
  );
}
