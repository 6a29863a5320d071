import { api, ApiFailure, type Destination } from './api';
import { announce, badge, copy, field, formValues, h, replace, time } from './dom';
import { filtersPanel } from './filters';
import { replaysPanel } from './replays';
import { healthPanel } from './health';
import { mappingsPanel, parsedJson, SAMPLE_MAPPINGS } from './mappings';
import { overviewPanel } from './overview';
import type { Page } from './page';
import { chosenSource, listSources, sourcePicker } from './sources';

/** `whsec_` + base64 of 32 random bytes: a Standard Webhooks secret made in the browser, sent once. */
function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** `Name: value` lines → a headers object (values are write-only: the API never shows them again). */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(':');
    if (colon < 1) throw new Error(`Header line "${line.split(':')[0]}" needs the form Name: value`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** "a, b" or one per line → category ids, blanks dropped (the API checks the limits and names the rule broken). */
function parseCategories(text: string): string[] {
  return text.split(/[,\n]/).map((c) => c.trim()).filter(Boolean);
}

/** What a destination's consent settings mean, in words (issue 30). */
function consentSummary({ categories, whenAbsent }: Destination['consent']): string {
  const needs = categories.length === 0 ? 'Needs no consent category: gets events whatever their consent.' : `Gets an event only if it grants every one of: ${categories.join(', ')}.`;
  return `${needs} Events without consent preferences are ${whenAbsent === 'drop' ? 'dropped' : 'delivered'}.`;
}

export async function destinationsPage(page: Page): Promise<void> {
  const { main, query } = page;
  const sources = await listSources();
  if (sources.length === 0) {
    replace(main, h('h1', {}, 'Destinations'), h('p', {}, 'No source yet: ', h('a', { href: '#/sources' }, 'create one first'), '.'));
    return;
  }
  const sourceId = chosenSource(sources, query.get('source'));
  const destinations = (await api<{ destinations: Destination[] }>('GET', `/admin/sources/${encodeURIComponent(sourceId)}/destinations`)).destinations;
  const reload = () => destinationsPage(page);

  const createForm = h(
    'form',
    {
      'aria-label': 'Create a destination',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const values = formValues(createForm);
        try {
          const headers = parseHeaders(values.headers ?? '');
          const urls = (values.urls ?? '').split('\n').map((u) => u.trim()).filter(Boolean);
          await api('POST', `/admin/sources/${encodeURIComponent(sourceId)}/destinations`, {
            name: values.name || undefined,
            enabled: (createForm.elements.namedItem('enabled') as HTMLInputElement).checked,
            ...(values.sharedSecret && { sharedSecret: values.sharedSecret }),
            ...(values.maxRequestsPerSecond && { maxRequestsPerSecond: Number(values.maxRequestsPerSecond) }),
            ...(values.consentCategories && { consent: { categories: parseCategories(values.consentCategories) } }),
            webhooks: urls.map((url) => ({ url, headers })),
          });
          announce('Destination created');
          await reload();
        } catch (err) {
          replace(createErrors, err instanceof Error ? err.message : String(err));
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
  const createErrors = h('p', { class: 'error', role: 'alert' });

  // Issue 33: an actions destination is made from its mappings (JSON), no webhook URLs.
  const actionsForm = h(
    'form',
    {
      'aria-label': 'Create an actions destination',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const values = formValues(actionsForm);
        try {
          const mappings = parsedJson(values.mappings ?? '', 'Mappings');
          await api('POST', `/admin/sources/${encodeURIComponent(sourceId)}/destinations`, { type: 'actions', name: values.name || undefined, enabled: true, mappings });
          announce('Actions destination created');
          await reload();
        } catch (err) {
          replace(actionsErrors, err instanceof Error ? err.message : String(err));
        }
      },
    },
    field('Actions destination name', h('input', { name: 'name', maxlength: 200 })),
    field("Mappings (JSON, Segment's Webhooks (Actions) shape, 1 to 5)", h('textarea', { name: 'mappings', rows: 12, cols: 60, spellcheck: false }, SAMPLE_MAPPINGS)),
    h('button', { type: 'submit' }, 'Create actions destination'),
  );
  const actionsErrors = h('p', { class: 'error', role: 'alert' });

  replace(
    main,
    h('h1', {}, 'Destinations'),
    h('form', { onsubmit: (e: Event) => e.preventDefault() }, sourcePicker(sources, sourceId, (id) => (location.hash = `#/destinations?source=${id}`))),
    destinations.length === 0 && h('p', {}, 'This source has no destination yet.'),
    ...destinations.map((d) => destinationCard(d, page, reload)),
    h('section', { class: 'card', 'aria-labelledby': 'new-destination' }, h('h2', { id: 'new-destination' }, 'New destination'), createForm, createErrors),
    h('section', { class: 'card', 'aria-labelledby': 'new-actions-destination' }, h('h2', { id: 'new-actions-destination' }, 'New actions destination'), actionsForm, actionsErrors),
  );
}

function destinationCard(destination: Destination, page: Page, reload: () => Promise<void>): HTMLElement {
  const path = `/admin/destinations/${encodeURIComponent(destination.id)}`;
  const patch = async (body: Record<string, unknown>, done: string) => {
    try {
      await api('PATCH', path, body);
      // Announced once the page shows the change: the reload replaces every form on it.
      await reload();
      announce(done);
    } catch (err) {
      announce(err instanceof Error ? err.message : String(err));
    }
  };
  const secretInput = h('input', { type: 'password', name: 'sharedSecret', autocomplete: 'off', required: true });
  const rateInput = h('input', { type: 'number', name: 'maxRequestsPerSecond', min: 1, max: 10000, step: 1, value: destination.maxRequestsPerSecond ?? '' });
  const categoriesInput = h('input', { name: 'consentCategories', size: 40, value: destination.consent.categories.join(', ') });
  const whenAbsentInput = h(
    'select',
    { name: 'whenAbsent' },
    h('option', { value: 'deliver', selected: destination.consent.whenAbsent === 'deliver' }, 'deliver them'),
    h('option', { value: 'drop', selected: destination.consent.whenAbsent === 'drop' }, 'drop them'),
  );
  const signingOut = h('div');
  const health = h('div', { class: 'health' });
  void healthPanel(destination, health, page, reload);
  const overview = h('div', { class: 'overview' });
  void overviewPanel(destination, overview, page);
  const filters = h('div', { class: 'filters' });
  void filtersPanel(destination, filters, page, reload);
  const replays = h('div', { class: 'replays' });
  void replaysPanel(destination, replays, page);
  return h(
    'section',
    { class: 'card', 'data-destination-id': destination.id, 'aria-label': `Destination ${destination.name}` },
    h('h2', {}, destination.name, ' ', badge(destination.enabled ? 'on' : 'off'), destination.paused && ' ', destination.paused && badge('paused')),
    h('p', { class: 'muted' }, h('code', {}, destination.id), ' · created ', time(destination.createdAt)),
    h('button', { type: 'button', class: 'secondary', onclick: () => patch({ enabled: !destination.enabled }, destination.enabled ? 'Switched off' : 'Switched on') }, destination.enabled ? 'Switch off' : 'Switch on'),
    ' ',
    // Hold, unlike switching off, keeps every message and sends them on resume (issue 20).
    h('button', { type: 'button', class: 'secondary', onclick: () => patch({ paused: !destination.paused }, destination.paused ? 'Resumed: held messages are sent' : 'Paused: messages are held') }, destination.paused ? 'Resume' : 'Pause'),
    h(
      'p',
      { class: 'flow-state' },
      destination.paused ? h('span', {}, 'Paused since ', time(destination.pausedAt ?? destination.createdAt), ': messages are held, not sent, and go out on resume. ') : 'Sending. ',
      destination.maxRequestsPerSecond === null ? 'No rate limit.' : `Rate limit: ${destination.maxRequestsPerSecond} requests per second.`,
    ),
    h(
      'form',
      {
        'aria-label': 'Rate limit',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void patch({ maxRequestsPerSecond: rateInput.value === '' ? null : Number(rateInput.value) }, 'Rate limit saved');
        },
      },
      field('Rate limit (requests per second, empty for none)', rateInput),
      h('button', { type: 'submit' }, 'Save rate limit'),
    ),
    h('h3', {}, 'Consent'),
    h('p', { class: 'consent-state' }, consentSummary(destination.consent)),
    h(
      'form',
      {
        'aria-label': 'Consent',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void patch({ consent: { categories: parseCategories(categoriesInput.value), whenAbsent: whenAbsentInput.value } }, 'Consent settings saved');
        },
      },
      field('Consent categories it needs, comma-separated (empty for none)', categoriesInput),
      field('Events without consent preferences', whenAbsentInput),
      h('button', { type: 'submit' }, 'Save consent'),
    ),
    h('h3', {}, 'Delivery overview'),
    overview,
    destination.type === 'actions' && destination.mappings ? h('h3', {}, 'Mappings') : h('h3', {}, 'Webhook URLs'),
    destination.type === 'actions' && destination.mappings ? mappingsPanel({ ...destination, mappings: destination.mappings }, reload) : health,
    h('h3', {}, 'Filters'),
    filters,
    h('h3', {}, 'Replays'),
    replays,
    h('h3', {}, 'Shared secret (X-Signature)'),
    h('p', {}, destination.sharedSecretSet ? 'Set: every request carries X-Signature.' : 'Not set: requests are not signed with X-Signature.'),
    h(
      'form',
      {
        'aria-label': 'Shared secret',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void patch({ sharedSecret: secretInput.value }, 'Shared secret saved');
        },
      },
      field(destination.sharedSecretSet ? 'New shared secret (rotates it)' : 'Shared secret', secretInput),
      h('button', { type: 'submit' }, destination.sharedSecretSet ? 'Rotate shared secret' : 'Set shared secret'),
      destination.sharedSecretSet && h('button', { type: 'button', class: 'secondary', onclick: () => patch({ sharedSecret: null }, 'Shared secret cleared') }, 'Clear'),
    ),
    h('h3', {}, 'Standard Webhooks signature'),
    h(
      'p',
      {},
      destination.signingSecretSet ? 'On: requests carry webhook-id, webhook-timestamp and webhook-signature.' : 'Off.',
      destination.previousSigningSecretUntil && ` The previous secret also signs until ${new Date(destination.previousSigningSecretUntil).toLocaleString()}.`,
    ),
    h(
      'div',
      {},
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            const secret = newSigningSecret();
            try {
              await api('PATCH', path, { signingSecret: secret });
            } catch (err) {
              announce(err instanceof ApiFailure ? err.message : String(err));
              return;
            }
            const box = h('input', { readonly: true, value: secret, size: 60 });
            replace(
              signingOut,
              h('section', { class: 'card once' }, h('p', {}, 'New signing secret, shown once: give it to the receiver.'), field('Signing secret', box), h('button', { type: 'button', onclick: () => copy(secret, box) }, 'Copy')),
            );
          },
        },
        destination.signingSecretSet ? 'Rotate signing secret' : 'Generate signing secret',
      ),
      ' ',
      destination.signingSecretSet && h('button', { type: 'button', class: 'secondary', onclick: () => patch({ signingSecret: null }, 'Standard Webhooks signature off') }, 'Switch off'),
    ),
    signingOut,
  );
}
