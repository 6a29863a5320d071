import { formFor } from './access';
import { api, type Destination } from './api';
import { badge, field, formValues, h, replace } from './dom';
import { destinationState } from './destination';
import { parseCategories } from './destination-settings';
import { parsedJson, SAMPLE_MAPPINGS } from './mappings';
import type { DestinationOverview } from './overview';
import type { Page } from './page';
import { chosenSource, listSources, sourcePicker } from './sources';

const CREATE_ROUTE = 'POST /admin/sources/:sourceId/destinations';
const HOUR_MS = 3_600_000;

/** `Name: value` lines → a headers object (values are write-only: the API never shows them again). */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)) {
    const colon = line.indexOf(':');
    if (colon < 1) throw new Error(`Header line "${line.split(':')[0]}" needs the form Name: value`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * A row's last hour, filled in once the overview answers: the list shows at once and each row's
 * numbers follow (one overview per destination, read in parallel).
 */
async function fillLastHour(destination: Destination, delivered: HTMLElement, failed: HTMLElement, page: Page): Promise<void> {
  const until = new Date();
  const since = new Date(until.getTime() - HOUR_MS);
  try {
    const overview = await api<DestinationOverview>('GET', `/admin/destinations/${encodeURIComponent(destination.id)}/overview?${new URLSearchParams({ since: since.toISOString(), until: until.toISOString() })}`);
    if (page.left()) return;
    delivered.textContent = String(overview.delivered);
    failed.textContent = String(overview.failed);
    if (overview.failed > 0) failed.classList.add('error');
  } catch {
    delivered.textContent = failed.textContent = '–';
  }
}

/** A source's destinations as a list, as Segment shows them: name, type, state and the last hour; each name opens its page. */
export async function destinationsPage(page: Page): Promise<void> {
  const { main, query } = page;
  const sources = await listSources();
  if (sources.length === 0) {
    replace(main, h('h1', {}, 'Destinations'), h('p', {}, 'No source yet: ', h('a', { href: '#/sources' }, 'create one first'), '.'));
    return;
  }
  const sourceId = chosenSource(sources, query.get('source'));
  const destinations = (await api<{ destinations: Destination[] }>('GET', `/admin/sources/${encodeURIComponent(sourceId)}/destinations`)).destinations;
  if (page.left()) return;
  const opened = (created: { id: string }) => (location.hash = `#/destinations/${encodeURIComponent(created.id)}`);

  const rows = destinations.map((d) => {
    const delivered = h('td', { class: 'count delivered-hour' }, '…');
    const failed = h('td', { class: 'count failed-hour' }, '…');
    void fillLastHour(d, delivered, failed, page);
    const state = destinationState(d);
    return h(
      'tr',
      { 'data-destination-id': d.id },
      h('td', {}, h('a', { href: `#/destinations/${encodeURIComponent(d.id)}`, title: d.id }, d.name)),
      h('td', { class: 'destination-type' }, d.type === 'actions' ? 'actions' : 'webhooks'),
      h('td', { class: 'destination-state' }, badge(state, state === 'on' ? 'on' : state)),
      delivered,
      failed,
    );
  });

  replace(
    main,
    h('h1', {}, 'Destinations'),
    h(
      'form',
      { onsubmit: (e: Event) => e.preventDefault() },
      sourcePicker(sources, sourceId, (id) => (location.hash = `#/destinations?source=${encodeURIComponent(id)}`)),
    ),
    destinations.length === 0
      ? h('p', {}, 'This source has no destination yet.')
      : h(
          'table',
          { class: 'destinations' },
          h('caption', { class: 'muted' }, `${destinations.length} destination(s); delivered and failed over the last hour`),
          h('thead', {}, h('tr', {}, ...['Name', 'Type', 'State', 'Delivered (1 h)', 'Failed (1 h)'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, ...rows),
        ),
    formFor(CREATE_ROUTE, 'Creating destinations', () =>
      h(
        'div',
        { class: 'new-destinations' },
        h('details', { class: 'panel', 'data-panel': 'new-destination' }, h('summary', {}, h('h2', { id: 'new-destination' }, 'New destination')), webhooksForm(sourceId, opened)),
        h('details', { class: 'panel', 'data-panel': 'new-actions-destination' }, h('summary', {}, h('h2', { id: 'new-actions-destination' }, 'New actions destination')), actionsForm(sourceId, opened)),
      ),
    ),
  );
}

/** A webhooks destination: its URLs in order, headers, secret, rate limit, consent. */
function webhooksForm(sourceId: string, opened: (created: { id: string }) => void): HTMLElement {
  const errors = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    {
      'aria-label': 'Create a destination',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const values = formValues(form);
        try {
          const headers = parseHeaders(values.headers ?? '');
          const urls = (values.urls ?? '')
            .split('\n')
            .map((u) => u.trim())
            .filter(Boolean);
          opened(
            await api<{ id: string }>('POST', `/admin/sources/${encodeURIComponent(sourceId)}/destinations`, {
              name: values.name || undefined,
              enabled: (form.elements.namedItem('enabled') as HTMLInputElement).checked,
              ...(values.sharedSecret && { sharedSecret: values.sharedSecret }),
              ...(values.maxRequestsPerSecond && { maxRequestsPerSecond: Number(values.maxRequestsPerSecond) }),
              ...(values.consentCategories && { consent: { categories: parseCategories(values.consentCategories) } }),
              webhooks: urls.map((url) => ({ url, headers })),
            }),
          );
        } catch (err) {
          replace(errors, err instanceof Error ? err.message : String(err));
        }
      },
    },
    field('Name', h('input', { name: 'name', maxlength: 200 })),
    field('Webhook URLs, one per line, tried in order', h('textarea', { name: 'urls', rows: 3, cols: 60, required: true })),
    field('Static headers (Name: value), for every URL', h('textarea', { name: 'headers', rows: 2, cols: 40 })),
    field('Shared secret (X-Signature)', h('input', { name: 'sharedSecret', type: 'password', autocomplete: 'off' })),
    field('Rate limit (requests per second, empty for none)', h('input', { name: 'maxRequestsPerSecond', type: 'number', min: 1, max: 10000, step: 1 })),
    field('Consent categories it needs, comma-separated (empty for none)', h('input', { name: 'consentCategories', size: 40 })),
    h('label', {}, 'Enabled', h('input', { type: 'checkbox', name: 'enabled', checked: true })),
    h('button', { type: 'submit' }, 'Create destination'),
  );
  return h('div', {}, form, errors);
}

/** An actions destination is made from its mappings (JSON, as Segment exports them), no webhook URLs; the page it opens edits them as forms. */
function actionsForm(sourceId: string, opened: (created: { id: string }) => void): HTMLElement {
  const errors = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    {
      'aria-label': 'Create an actions destination',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const values = formValues(form);
        try {
          const mappings = parsedJson(values.mappings ?? '', 'Mappings');
          opened(await api<{ id: string }>('POST', `/admin/sources/${encodeURIComponent(sourceId)}/destinations`, { type: 'actions', name: values.name || undefined, enabled: true, mappings }));
        } catch (err) {
          replace(errors, err instanceof Error ? err.message : String(err));
        }
      },
    },
    field('Actions destination name', h('input', { name: 'name', maxlength: 200 })),
    field("Mappings (JSON, Segment's Webhooks (Actions) shape, 1 to 5)", h('textarea', { name: 'mappings', rows: 12, cols: 60, spellcheck: false }, SAMPLE_MAPPINGS)),
    h('button', { type: 'submit' }, 'Create actions destination'),
  );
  return h('div', {}, form, errors);
}
