import { bareIds, openDestination, screenshot, usePortal, waitFor } from '../helpers/portal';
import { ADMIN_TOKEN, deliveryResult, send } from '../helpers/system';

/**
 * Actions destinations' mappings in the operators' portal, in a real headless Chromium on the real API, Temporal
 * and worker: an actions destination's mappings edited as a form per mapping (key → directive rows
 * for the data), the draft previewed before it is saved, raw JSON one toggle away, and the next
 * message reaching the real receiver as the preview said; every directive of the mapping kit in its
 * own form, nested objects as nested fields, round-tripping exactly through the JSON view; and each
 * mapping's health with the controls a webhook URL has, for an admin and a read-only token.
 */

const run = usePortal();

it("edits an actions destination's mapping in its form, previews the draft unsaved, round-trips through JSON, saves, and ingestion sends what the preview showed", async () => {
  const { system, receiver, page, origin } = run;
  const { source, writeKey } = await system.store.sources.create('Portal mappings');
  const destination = await system.store.destinations.create(source.id, {
    name: 'Slack',
    enabled: true,
    type: 'actions',
    webhooks: [],
    mappings: [{ name: 'Orders', enabled: true, trigger: 'event = "Order Completed"', settings: { url: receiver.url, method: 'POST', headers: { 'X-Key': 'portal-header-secret' }, data: { text: { '@template': 'Order {{properties.orderId}}' } } } }],
  });

  await openDestination(page, origin, destination.id, ['mappings']);
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  const mapping = card.locator('fieldset[data-mapping-index="0"]');
  await mapping.waitFor();

  // The saved mapping as fields; the header's value masked, never on the page.
  expect(await mapping.getByLabel('Name', { exact: true }).inputValue()).toBe('Orders');
  expect(await mapping.getByLabel('Trigger (FQL)').inputValue()).toBe('event = "Order Completed"');
  expect(await mapping.getByLabel('Method').inputValue()).toBe('POST');
  expect(await mapping.getByLabel('URL').inputValue()).toBe(receiver.url);
  expect(await mapping.getByLabel('Header name').inputValue()).toBe('X-Key');
  expect(await mapping.getByLabel('Header value').inputValue()).toBe('********');
  const text = mapping.locator('.field-row').first();
  expect(await text.getByLabel('Key').inputValue()).toBe('text');
  expect(await text.getByLabel('Kind').inputValue()).toBe('template');
  expect(await text.getByLabel('Template').inputValue()).toBe('Order {{properties.orderId}}');
  expect(await page.content()).not.toContain('portal-header-secret');

  // The draft: a changed template and a new @path field, previewed before anything is saved.
  await text.getByLabel('Template').fill('Order {{properties.orderId}} by {{userId}}');
  await mapping.getByRole('button', { name: 'Add field' }).click();
  const total = mapping.locator('.field-row').nth(1);
  await total.getByLabel('Key').fill('total');
  await total.getByLabel('Kind').selectOption('path');
  await total.getByLabel('Path').fill('$.properties.total');
  const event = { type: 'track', event: 'Order Completed', userId: 'u-9', properties: { orderId: 'o-42', total: 42 } };
  await card.getByLabel('Event to preview (JSON)').fill(JSON.stringify(event));
  await card.getByRole('button', { name: 'Preview the draft' }).click();
  await card.locator('.mapping-preview', { hasText: 'Order o-42 by u-9' }).waitFor();
  const preview = JSON.parse((await card.locator('.mapping-preview').textContent())!) as { matched: boolean; request: { body: unknown; headers: Record<string, string> } }[];
  expect(await bareIds(page, { [source.id]: 'Portal mappings', [destination.id]: 'Slack' })).toEqual([]);
  await screenshot(page, 'destination-mappings');
  expect(preview[0]).toMatchObject({ matched: true, request: { body: { text: 'Order o-42 by u-9', total: 42 }, headers: { 'x-key': '********' } } });
  expect((await system.store.destinations.get(destination.id))!.mappings[0].settings.data).toEqual({ text: { '@template': 'Order {{properties.orderId}}' } });

  // Raw JSON one toggle away, holding the draft; a directive the kit refuses is the API's 400, on the page.
  await card.getByRole('button', { name: 'Edit as JSON' }).click();
  const json = card.getByLabel('Mappings (JSON)');
  const shown = JSON.parse(await json.inputValue()) as { settings: { data: Record<string, unknown> } }[];
  expect(shown[0].settings.data).toEqual({ text: { '@template': 'Order {{properties.orderId}} by {{userId}}' }, total: { '@path': '$.properties.total' } });
  await json.fill(JSON.stringify([{ ...shown[0], settings: { ...shown[0].settings, data: { text: { '@nonsense': 1 } } } }]));
  await card.getByRole('button', { name: 'Save mappings' }).click();
  await card.locator('.mappings .error', { hasText: '@nonsense' }).waitFor();
  expect(await card.locator('.mappings .error').textContent()).toContain('mapping "Orders"');
  expect(await card.locator('.mappings .error').textContent()).toContain('@nonsense');

  // Back to the form: the JSON's mapping as fields again.
  await json.fill(JSON.stringify(shown));
  await card.getByRole('button', { name: 'Edit as form' }).click();
  expect(await mapping.locator('.field-row').count()).toBe(2);
  expect(await mapping.locator('.field-row').nth(1).getByLabel('Path').inputValue()).toBe('$.properties.total');

  // Saved with the masked header sent back as shown: the header keeps its value.
  await card.getByRole('button', { name: 'Save mappings' }).click();
  await page.locator('#status', { hasText: 'Mappings saved' }).waitFor();
  const saved = (await system.store.destinations.get(destination.id))!.mappings[0];
  expect(saved.settings).toMatchObject({ headers: { 'X-Key': 'portal-header-secret' }, data: { text: { '@template': 'Order {{properties.orderId}} by {{userId}}' }, total: { '@path': '$.properties.total' } } });
  // The page read again keeps the panel open.
  await card.locator('fieldset[data-mapping-index="0"]').waitFor();

  await send(system.app, writeKey, 'track', { ...event, messageId: 'portal-mapped' });
  expect(await deliveryResult(system.client, source.id, 'portal-mapped')).toMatchObject({ ok: true });
  const arrived = receiver.requests.find((r) => r.body.includes('o-42'))!;
  expect(JSON.parse(arrived.body)).toEqual({ text: 'Order o-42 by u-9', total: 42 });
  expect(arrived.headers['x-key']).toBe('portal-header-secret');
  expect(run.pageErrors).toEqual([]);
}, 120_000);

/** A token minted through the API, for the read-only views. */
async function mint(name: string, scopes: string[]): Promise<string> {
  const reply = await run.system.app.inject({ method: 'POST', url: '/admin/tokens', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name, scopes } });
  expect(reply.statusCode).toBe(201);
  return reply.json<{ token: string }>().token;
}

/** Creates an actions destination through the API, so the mapping kit's checks pass on it as on any save. */
async function createActions(sourceId: string, body: Record<string, unknown>): Promise<{ id: string }> {
  const reply = await run.system.app.inject({ method: 'POST', url: `/admin/sources/${sourceId}/destinations`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { type: 'actions', enabled: true, ...body } });
  expect([reply.statusCode, reply.body]).toEqual([201, expect.any(String)]);
  return reply.json<{ id: string }>();
}

it("shows each mapping's health (success, p95, last error, held, backpressure) with the controls a webhook URL has, and a read-only token the same, its buttons disabled", async () => {
  const { system, receiver, page, origin } = run;
  const { source, writeKey } = await system.store.sources.create('Portal mapping health');
  // One receiver, two behaviours: a path with "refuses" answers 400 (a permanent failure).
  const before = receiver.responder();
  receiver.respond((request, n) => (request.path.includes('refuses') ? { status: 400, body: 'no such contact' } : before(request, n)));
  const destination = await createActions(source.id, {
    name: 'CRM (actions)',
    mappings: [
      { name: 'Orders', enabled: true, trigger: 'type = "track"', settings: { url: `${receiver.url}/orders`, method: 'POST', data: { order: { '@path': '$.properties.orderId' } } } },
      { name: 'Contacts', enabled: true, trigger: 'type = "track"', settings: { url: `${receiver.url}/refuses`, method: 'POST', headers: { 'X-Key': 'health-header-secret' }, data: { '@path': '$.' } } },
    ],
  });
  const ids = ['mapping-health-1', 'mapping-health-2'];
  for (const messageId of ids) await send(system.app, writeKey, 'track', { messageId, userId: 'u-health', event: 'Order Completed', properties: { orderId: messageId } });
  for (const messageId of ids) await deliveryResult(system.client, source.id, messageId);
  // Orders' URL answered 429 with Retry-After (as a worker records it): paused for every message.
  const ordersUrl = `${receiver.url}/orders`;
  await system.store.flowControl.backpressure(destination.id, ordersUrl, 10 * 60_000, 'HTTP 429 with Retry-After');

  await openDestination(page, origin, destination.id, ['health']);
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  // Hold is the destination's: paused from the page's header, every mapping shows it held.
  await card.getByRole('button', { name: 'Pause' }).click();
  await page.locator('#status', { hasText: 'Paused' }).waitFor();
  const orders = card.locator('table.mapping-health tr[data-mapping-name="Orders"]');
  const contacts = card.locator('table.mapping-health tr[data-mapping-name="Contacts"]');
  await waitFor(async () => {
    await page.reload();
    await contacts.waitFor();
    return (await orders.locator('.success-rate').textContent())!.includes('2/2') && (await contacts.locator('.success-rate').textContent())!.includes('0/2');
  }, "both mappings' attempts in their health");
  expect(await orders.locator('.success-rate').textContent()).toMatch(/^100 %/);
  expect(await orders.locator('td.p50-p95').textContent()).toMatch(/^\d+ ms \/ \d+ ms$/);
  expect(await contacts.locator('.success-rate').textContent()).toMatch(/^0 %/);
  expect(await contacts.locator('.last-error').textContent()).toContain('400');
  expect(await contacts.locator('svg.chart rect[data-rate="0.000"]').count()).toBeGreaterThan(0);
  expect(await orders.locator('.state .status-paused').textContent()).toBe('held');
  expect(await orders.locator('.backpressure').textContent()).toContain('HTTP 429 with Retry-After');
  expect(await contacts.locator('.backpressure').count()).toBe(0);
  expect(await card.locator('.flow').textContent()).toContain('Waited without sending');
  const names = { [source.id]: 'Portal mapping health', [destination.id]: 'CRM (actions)' };
  expect(await bareIds(page, names)).toEqual([]);
  await screenshot(page, 'destination-mapping-health');

  // A read-only token: the same figures, each control disabled naming the scope it needs.
  const readOnly = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await readOnly.goto(`${origin}/portal/`);
  await readOnly.getByLabel('Admin token').fill(await mint('mapping health viewer', ['read']));
  await readOnly.getByRole('button', { name: 'Log in' }).click();
  await readOnly.locator('#whoami').filter({ hasText: /\S/ }).waitFor();
  await readOnly.goto(`${origin}/portal/#/destinations/${destination.id}?open=health`);
  const readOnlyOrders = readOnly.locator('table.mapping-health tr[data-mapping-name="Orders"]');
  await readOnlyOrders.locator('.success-rate', { hasText: '2/2' }).waitFor();
  expect(await readOnlyOrders.getByRole('button', { name: 'Clear backpressure' }).isDisabled()).toBe(true);
  expect(await readOnlyOrders.locator('[data-needs-scope="operate"]').count()).toBe(1);
  expect(await readOnlyOrders.getByRole('button', { name: 'Switch off' }).getAttribute('data-needs-scope')).toBe('destinations:write');
  expect(await bareIds(readOnly, names)).toEqual([]);
  await screenshot(readOnly, 'read-only-destination-mapping-health');
  await readOnly.context().close();

  // Clear backpressure: the pause ends (DELETE …/mappings/Orders/backpressure).
  await orders.getByRole('button', { name: 'Clear backpressure' }).click();
  await page.locator('#status', { hasText: 'Backpressure cleared' }).waitFor();
  expect((await system.store.destinations.get(destination.id))!.mappingBackpressure ?? {}).toEqual({});
  await orders.locator('.success-rate').waitFor();
  expect(await orders.locator('.backpressure').count()).toBe(0);

  // Switch a mapping off and on again: the rest of the list as saved, its header value kept.
  await contacts.getByRole('button', { name: 'Switch off' }).click();
  await page.locator('#status', { hasText: 'Mapping Contacts switched off' }).waitFor();
  let saved = (await system.store.destinations.get(destination.id))!.mappings;
  expect(saved.map((m) => [m.name, m.enabled])).toEqual([['Orders', true], ['Contacts', false]]);
  expect(saved[1].settings.headers).toEqual({ 'X-Key': 'health-header-secret' });
  expect(await contacts.locator('.state .status-off').textContent()).toBe('off');
  await contacts.getByRole('button', { name: 'Switch on' }).click();
  await page.locator('#status', { hasText: 'Mapping Contacts switched on' }).waitFor();
  saved = (await system.store.destinations.get(destination.id))!.mappings;
  expect(saved.map((m) => [m.name, m.enabled])).toEqual([['Orders', true], ['Contacts', true]]);
  await card.getByRole('button', { name: 'Resume' }).click();
  await page.locator('#status', { hasText: 'Resumed' }).waitFor();
  receiver.respond(before);
  expect(run.pageErrors).toEqual([]);
}, 120_000);

it('shows the whole event as such, nested objects as nested fields and every directive in its own form, and round-trips form ↔ JSON exactly', async () => {
  const { system, page, origin, receiver } = run;
  const { source } = await system.store.sources.create('Portal mapping directives');
  const data = {
    user: { id: { '@path': '$.userId' }, email: { '@if': { exists: { '@path': '$.traits.email' }, then: { '@path': '$.traits.email' }, else: 'none' } } },
    event: { '@case': { operator: 'upper', value: { '@path': '$.event' } } },
    slug: { '@replace': { pattern: ' ', replacement: '-', value: { '@path': '$.event' } } },
    items: { '@arrayPath': ['$.properties.products', { sku: { '@path': '$.sku' } }] },
    props: { '@json': { value: { '@path': '$.properties' }, mode: 'encode' } },
    flat: { '@flatten': { value: { '@path': '$.context' }, separator: '_' } },
    merged: { '@merge': { direction: 'right', objects: [{ '@path': '$.traits' }, { plan: 'pro' }] } },
    who: { '@transform': { apply: { id: { '@path': '$.userId' } }, mapping: { '@path': '$.id' } } },
    fixed: { '@literal': 'as is' },
    coupon: { '@excludeWhenNull': { '@path': '$.properties.coupon' } },
    doubled: { '@liquid': '{{ properties.total | times: 2 }}' },
    count: 3,
  };
  const destination = await createActions(source.id, {
    name: 'Every directive',
    mappings: [
      { name: 'Everything', enabled: true, trigger: 'type = "track"', settings: { url: receiver.url, method: 'POST', data: { '@path': '$.' } } },
      { name: 'Directives', enabled: true, trigger: 'type = "track"', settings: { url: receiver.url, method: 'POST', data } },
    ],
  });
  await openDestination(page, origin, destination.id, ['mappings']);
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  const everything = card.locator('fieldset[data-mapping-index="0"]');
  const directives = card.locator('fieldset[data-mapping-index="1"]');
  await directives.waitFor();

  // Segment's default body is "the whole event", not a field named "@path".
  const root = everything.locator('.mapping-data > .node');
  expect(await root.getAttribute('data-kind')).toBe('event');
  expect(await root.locator(':scope > .node-head select[name="kind"] option:checked').textContent()).toBe('the whole event');
  expect(await everything.locator('.whole-event').isVisible()).toBe(true);
  expect(await everything.locator('input[name="key"]').count()).toBe(0);

  // Each field of the body in its own form: its kind, nested values under it.
  const row = (key: string, within = directives.locator('.mapping-data > .node > .node-body')) => within.locator(`:scope > .field-row[data-field="${key}"]`);
  const kindOf = async (key: string, within?: ReturnType<typeof directives.locator>) => row(key, within).locator(':scope > .node').getAttribute('data-kind');
  const kinds = Object.fromEntries(await Promise.all(Object.keys(data).map(async (key) => [key, await kindOf(key)] as const)));
  expect(kinds).toEqual({ user: 'fields', event: 'case', slug: 'replace', items: 'arrayPath', props: 'json', flat: 'flatten', merged: 'merge', who: 'transform', fixed: 'literal', coupon: 'excludeWhenNull', doubled: 'liquid', count: 'value' });
  const user = row('user').locator(':scope > .node > .node-body');
  expect(await kindOf('id', user)).toBe('path');
  expect(await row('id', user).getByLabel('Path').inputValue()).toBe('$.userId');
  const email = row('email', user).locator(':scope > .node > .node-body');
  expect(await email.locator(':scope > [data-slot="else"] .node').first().getAttribute('data-kind')).toBe('text');
  expect(await row('event').getByLabel('Case').inputValue()).toBe('upper');
  expect(await row('items').getByLabel('List path').inputValue()).toBe('$.properties.products');
  expect(await row('doubled').getByLabel('Liquid template').inputValue()).toBe('{{ properties.total | times: 2 }}');
  await screenshot(page, 'destination-mapping-directives');

  // As JSON: the same text the API holds, key for key.
  await card.getByRole('button', { name: 'Edit as JSON' }).click();
  const json = card.getByLabel('Mappings (JSON)');
  const saved = (await system.app.inject({ method: 'GET', url: `/admin/destinations/${destination.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json<{ mappings: unknown[] }>().mappings;
  expect(await json.inputValue()).toBe(JSON.stringify(saved, null, 2));

  // Back to the form and edited there: the @case to lower, the @if's else; then as JSON again.
  await card.getByRole('button', { name: 'Edit as form' }).click();
  await row('event').getByLabel('Case').selectOption('lower');
  await row('email', user).locator('[data-slot="else"]').getByLabel('Text').fill('unknown');
  await card.getByRole('button', { name: 'Edit as JSON' }).click();
  const edited = JSON.parse(await json.inputValue()) as { settings: { data: typeof data } }[];
  const expected = { ...data, event: { '@case': { operator: 'lower', value: { '@path': '$.event' } } }, user: { ...data.user, email: { '@if': { ...data.user.email['@if'], else: 'unknown' } } } };
  expect(JSON.stringify(edited[1].settings.data)).toBe(JSON.stringify(expected));

  // Edited as JSON, back in the form: the change shows in its field.
  edited[1].settings.data = { ...expected, fixed: { '@literal': 'changed' } };
  await json.fill(JSON.stringify(edited, null, 2));
  await card.getByRole('button', { name: 'Edit as form' }).click();
  expect(await row('fixed').locator('[data-slot="value"]').getByLabel('Text').inputValue()).toBe('changed');

  // Saved: the store holds exactly what the form showed.
  await card.getByRole('button', { name: 'Save mappings' }).click();
  await page.locator('#status', { hasText: 'Mappings saved' }).waitFor();
  const stored = (await system.store.destinations.get(destination.id))!.mappings;
  expect(JSON.stringify(stored[1].settings.data)).toBe(JSON.stringify({ ...expected, fixed: { '@literal': 'changed' } }));
  expect(stored[0].settings.data).toEqual({ '@path': '$.' });
  expect(run.pageErrors).toEqual([]);
}, 120_000);
