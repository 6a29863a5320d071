import { OPERATIONAL_EVENT_TYPES, OPERATIONAL_FORMATS } from '../../delivery/operational-events';
import { formFor, guarded } from './access';
import { api } from './api';
import { announce, badge, field, h, replace, time } from './dom';
import { FieldProblems } from './field-problems';
import type { Page } from './page';
import { showSecretOnce } from './secret-once';

interface Endpoint {
  id: string;
  url: string;
  eventTypes: string[];
  format: string;
  enabled: boolean;
  createdAt: string;
}

const ENDPOINTS = '/admin/operational-endpoints';
const PATCH_ROUTE = 'PATCH /admin/operational-endpoints/:id';

/**
 * GET/POST/PATCH/DELETE /admin/operational-endpoints: where Switchyard sends its own events
 * (Svix's names, signed with Standard Webhooks). Reading needs `read` (the URL then has its
 * token-like segments as `…`); every change `destinations:write`. A generated secret is shown once.
 */
export async function operationalEndpointsPage(page: Page): Promise<void> {
  const { main } = page;
  const { endpoints } = await api<{ endpoints: Endpoint[] }>('GET', ENDPOINTS);
  if (page.left()) return;
  const reload = () => operationalEndpointsPage(page);
  const problems = new FieldProblems();
  const urlInput = h('input', { type: 'url', name: 'url', required: true, size: 60, placeholder: 'https:// … where your alerting listens' });
  const typeBoxes = OPERATIONAL_EVENT_TYPES.map((type) => ({ type, box: h('input', { type: 'checkbox', name: 'eventTypes', value: type }) }));
  const formatSelect = h(
    'select',
    { name: 'format' },
    ...OPERATIONAL_FORMATS.map((format) => h('option', { value: format }, format === 'standard' ? 'standard (signed {type, timestamp, data})' : 'slack ({text}, an incoming webhook)')),
  );
  const secretInput = h('input', { name: 'secret', size: 60, autocomplete: 'off', placeholder: 'whsec_…' });
  const change = async (method: string, id: string, body: unknown, done: string) => {
    await api(method, `${ENDPOINTS}/${encodeURIComponent(id)}`, body);
    await reload();
    announce(done);
  };
  const form = () =>
    h(
      'form',
      {
        class: 'stacked',
        'aria-label': 'New operational endpoint',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          problems.clear();
          const eventTypes = typeBoxes.filter(({ box }) => box.checked).map(({ type }) => type);
          const secret = secretInput.value.trim();
          try {
            const made = await api<Endpoint & { secret?: string }>('POST', ENDPOINTS, { url: urlInput.value.trim(), eventTypes, format: formatSelect.value, ...(secret && { secret }) });
            await reload();
            if (made.secret) showSecretOnce(main, 'Signing secret', made.secret);
            announce('Operational endpoint added');
          } catch (err) {
            problems.show(err);
          }
        },
      },
      field('URL (http or https, no user:password@; refused at save if it points at a private, loopback or metadata address outside EGRESS_ALLOWLIST)', urlInput),
      problems.slot('url'),
      h('fieldset', { class: 'choices' }, h('legend', {}, 'Event types (none ticked: every type)'), ...typeBoxes.map(({ type, box }) => h('label', { class: 'scope-choice' }, box, ` ${type}`))),
      problems.slot('eventTypes'),
      field('Format', formatSelect),
      problems.slot('format'),
      field('Secret (whsec_ + base64 of 24–64 bytes; empty: one is generated and shown once)', secretInput),
      problems.slot('secret'),
      problems.general,
      h('button', { type: 'submit' }, 'Add endpoint'),
    );
  replace(
    main,
    h('h1', {}, 'Operational webhooks'),
    h(
      'p',
      { class: 'muted' },
      "Where Switchyard sends its own events (Svix's names: attempts failing, exhausted and recovered, URLs switched off and on, finished background tasks), signed with Standard Webhooks. The secret is write-only.",
    ),
    h('div', { class: 'created' }),
    endpoints.length === 0
      ? h('p', { class: 'empty' }, 'No operational endpoint yet.')
      : h(
          'table',
          { class: 'operational-endpoints' },
          h('thead', {}, h('tr', {}, ...['URL', 'Event types', 'Format', 'State', 'Created', ''].map((title) => h('th', { scope: 'col' }, title)))),
          h(
            'tbody',
            {},
            ...endpoints.map((endpoint) =>
              h(
                'tr',
                { 'data-endpoint-id': endpoint.id },
                h('td', {}, h('code', { title: endpoint.id }, endpoint.url)),
                h('td', {}, endpoint.eventTypes.length === 0 ? 'all' : endpoint.eventTypes.join(', ')),
                h('td', {}, endpoint.format),
                h('td', {}, badge(endpoint.enabled ? 'on' : 'off')),
                h('td', {}, time(endpoint.createdAt)),
                h(
                  'td',
                  {},
                  guarded(
                    PATCH_ROUTE,
                    h(
                      'button',
                      { type: 'button', class: 'secondary', onclick: () => change('PATCH', endpoint.id, { enabled: !endpoint.enabled }, endpoint.enabled ? 'Switched off' : 'Switched on') },
                      endpoint.enabled ? 'Switch off' : 'Switch on',
                    ),
                  ),
                  ' ',
                  guarded(
                    'DELETE /admin/operational-endpoints/:id',
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'secondary',
                        onclick: async () => {
                          if (confirm(`Delete the endpoint ${endpoint.url}?`)) await change('DELETE', endpoint.id, undefined, 'Endpoint deleted');
                        },
                      },
                      'Delete',
                    ),
                  ),
                ),
              ),
            ),
          ),
        ),
    h('h2', {}, 'New endpoint'),
    formFor('POST /admin/operational-endpoints', 'Adding an endpoint', form),
  );
}
