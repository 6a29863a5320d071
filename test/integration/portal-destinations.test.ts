import { createHmac, randomBytes } from 'node:crypto';
import { signStandardWebhook } from '../../src/delivery/standard-webhooks';
import { openDestination, openDestinations, screenshot, usePortal, waitFor } from '../helpers/portal';
import { ADMIN_TOKEN, deliveryResult, send } from '../helpers/system';

/**
 * Destinations in the operators' portal, in a real headless Chromium on the real API, Temporal, worker
 * and receiver: a source's destinations as a list (name, type, state, the last hour's delivered and
 * failed), each name opening the destination's page, whose panels read nothing until opened; and
 * destinations by name where deliveries show them.
 */

const run = usePortal();

it("lists a source's destinations with their last hour, opens one's page with its panels closed until asked for, and names destinations in deliveries", async () => {
  const { system, receiver, page, origin } = run;
  const { source, writeKey } = await system.store.sources.create('Portal destinations');
  // One receiver, two behaviours: a path with "refuses" answers 400 (a permanent failure).
  receiver.respond((request) => ({ status: request.path.includes('refuses') ? 400 : 200 }));
  const warehouse = await system.store.destinations.create(source.id, { name: 'Warehouse', enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });
  const crm = await system.store.destinations.create(source.id, { name: 'Refusing CRM', enabled: true, webhooks: [{ url: `${receiver.url}/refuses`, headers: {} }] });
  const off = await system.store.destinations.create(source.id, { name: 'Switched off', enabled: false, webhooks: [{ url: receiver.url, headers: {} }] });
  const slack = await system.store.destinations.create(source.id, {
    name: 'Slack',
    enabled: true,
    type: 'actions',
    webhooks: [],
    mappings: [{ name: 'Signups', enabled: true, trigger: 'event = "Never Sent"', settings: { url: receiver.url, method: 'POST', headers: {}, data: { text: { '@path': '$.event' } } } }],
  });
  const ids = ['portal-list-1', 'portal-list-2'];
  for (const messageId of ids) await send(system.app, writeKey, 'track', { messageId, userId: 'portal-list-user', event: 'Signed Up' });
  for (const messageId of ids) await deliveryResult(system.client, source.id, messageId);

  // The list: one row per destination, the last hour's outcomes as numbers (Temporal visibility catches up).
  await openDestinations(page, origin, source.id);
  const rowOf = (id: string) => page.locator(`table.destinations tr[data-destination-id="${id}"]`);
  const cells = async (id: string) => rowOf(id).locator('td').allTextContents();
  const expected = {
    [warehouse.id]: ['Warehouse', 'webhooks', 'on', '2', '0'],
    [crm.id]: ['Refusing CRM', 'webhooks', 'on', '0', '2'],
    [off.id]: ['Switched off', 'webhooks', 'off', '0', '0'],
    [slack.id]: ['Slack', 'actions', 'on', '0', '0'],
  };
  let shown: Record<string, string[]> = {};
  await waitFor(
    async () => {
      await page.reload();
      await rowOf(slack.id).locator('td.failed-hour', { hasText: /\d/ }).waitFor();
      // Until no count is still loading: `first()`, as several may be (a bare locator that matches
      // more than one cell fails Playwright's strict mode instead of waiting).
      await page.locator('td.count', { hasText: '…' }).first().waitFor({ state: 'detached' });
      shown = Object.fromEntries(await Promise.all(Object.keys(expected).map(async (id) => [id, await cells(id)] as const)));
      return JSON.stringify(shown) === JSON.stringify(expected);
    },
    `the list to show ${JSON.stringify(expected)} (last shown ${JSON.stringify(shown)})`,
  );
  expect(await page.locator('table.destinations tbody tr').count()).toBe(4);
  expect(await rowOf(crm.id).locator('td.failed-hour').getAttribute('class')).toContain('error');
  await screenshot(page, 'destinations');

  // A name opens the destination's page; its panels are closed and have read nothing yet.
  const requested: string[] = [];
  page.on('request', (request) => requested.push(new URL(request.url()).pathname));
  await rowOf(crm.id).getByRole('link', { name: 'Refusing CRM' }).click();
  const card = page.locator(`section[data-destination-id="${crm.id}"]`);
  await card.waitFor();
  expect(await card.getByRole('heading', { level: 1 }).textContent()).toContain('Refusing CRM');
  expect(await card.locator('details.panel').evaluateAll((panels) => panels.map((p) => [p.getAttribute('data-panel'), p.hasAttribute('open')]))).toEqual(
    ['overview', 'webhooks', 'filters', 'replays', 'rate-limit', 'consent', 'signing'].map((key) => [key, false]),
  );
  const panelReads = () => requested.filter((path) => /\/(overview|health|filters|replays)$/.test(path));
  expect(panelReads()).toEqual([]);

  // Opened, a panel reads what it shows, once; the URL keeps it open across a reload.
  await card.locator('details[data-panel="overview"] > summary').click();
  await card.locator('table.funnel').waitFor();
  expect(panelReads()).toEqual([`/admin/destinations/${crm.id}/overview`]);
  expect(await card.locator('tr[data-step="failed"] td.count').textContent()).toBe('2');
  expect(page.url()).toMatch(/\?open=overview$/);
  await screenshot(page, 'destination');
  await page.reload();
  await page.locator(`section[data-destination-id="${crm.id}"] table.funnel`).waitFor();
  expect(await page.locator('details[open]').count()).toBe(1);

  // Deliveries: the destination filter by name; a delivery's page names each destination, its id in small type.
  await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
  const filter = page.getByRole('form', { name: 'Filter deliveries' });
  // (Playwright's label match reads a select's options too, so "Source" would also find this one.)
  const destinationSelect = filter.locator('select[name="destinationId"]');
  await destinationSelect.selectOption({ label: 'Refusing CRM' });
  expect(await destinationSelect.inputValue()).toBe(crm.id);
  await page.goto(`${origin}/portal/#/deliveries/${source.id}/${ids[0]}`);
  const crmAttempts = page.locator(`section[data-destination-id="${crm.id}"]`);
  await crmAttempts.waitFor();
  expect(await crmAttempts.locator('h2 .named a').textContent()).toBe('Refusing CRM');
  expect(await crmAttempts.locator('h2 small.id').textContent()).toBe(crm.id);
  expect(await page.locator(`section[data-destination-id="${warehouse.id}"] h2 .named a`).textContent()).toBe('Warehouse');
  expect(run.pageErrors).toEqual([]);
}, 120_000);

describe('POST /admin/destinations/:id/test', () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const test = (id: string, payload?: unknown, headers: Record<string, string> = admin) =>
    run.system.app.inject({ method: 'POST', url: `/admin/destinations/${id}/test`, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

  it('sends a signed sample as a real delivery and answers its first attempt; a given event goes through the filters, a stopped one names the rule', async () => {
    const { system, receiver } = run;
    const { source } = await system.store.sources.create('Test events');
    receiver.respond((request) => ({ status: request.path.includes('refuses') ? 400 : 200 }));
    const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;
    const destination = await system.store.destinations.create(source.id, { name: 'Tested', enabled: true, sharedSecret: 'test-s3cret', signingSecret, webhooks: [{ url: `${receiver.url}/tested`, headers: {} }] });
    await system.store.destinationFilters.create(destination.id, { title: 'Drop internal users', enabled: true, if: "userId = 'internal'", actions: [{ type: 'DROP' }] }, 10);

    // No body: the sample, signed with the destination's secret, shown as a delivery with its attempt.
    const sample = await test(destination.id);
    expect(sample.statusCode).toBe(200);
    const answer = sample.json();
    expect(answer).toMatchObject({ status: 'attempted', sourceId: source.id, attempt: { outcome: 'success', httpStatus: 200, webhookIndex: 0 } });
    expect(answer.messageId).toMatch(/^test-/);
    expect(typeof answer.attempt.durationMs).toBe('number');
    const request = await receiver.waitForMessage(answer.messageId);
    expect(JSON.parse(request.body)).toMatchObject({ type: 'track', event: 'Switchyard Test Event', userId: 'switchyard-test-user' });
    expect(request.headers['x-signature']).toBe(createHmac('sha1', 'test-s3cret').update(request.body, 'utf8').digest('hex'));
    expect(request.headers['webhook-id']).toBe(answer.messageId);
    expect(request.headers['webhook-signature']).toBe(`v1,${signStandardWebhook(signingSecret, answer.messageId, Number(request.headers['webhook-timestamp']), request.body)}`);
    const detail = await system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/deliveries/${answer.messageId}`, headers: admin });
    expect(detail.json().destinations[0]).toMatchObject({ destinationId: destination.id, attempts: [{ outcome: 'success', httpStatus: 200 }] });

    // A given event: a refusing receiver's status and error are the answer.
    const refusing = await system.store.destinations.create(source.id, { name: 'Refusing', enabled: true, webhooks: [{ url: `${receiver.url}/refuses`, headers: {} }] });
    const refused = (await test(refusing.id, { event: { type: 'identify', userId: 'u-test', traits: { plan: 'pro' } } })).json();
    expect(refused).toMatchObject({ status: 'attempted', attempt: { outcome: 'permanent', httpStatus: 400 } });
    expect(refused.attempt.error).toEqual(expect.any(String));

    // A filter that drops it: nothing sent, the filter named.
    const dropped = await test(destination.id, { event: { type: 'track', event: 'Signed Up', userId: 'internal' } });
    expect(dropped.statusCode).toBe(200);
    expect(dropped.json()).toMatchObject({ status: 'filtered', filtered: { reason: 'filters', message: 'filtered by filter "Drop internal users"' } });

    // An actions destination: its triggers decide (the sample matches none), its mapping makes the body.
    const actions = await system.store.destinations.create(source.id, {
      name: 'Mapped',
      enabled: true,
      type: 'actions',
      webhooks: [],
      mappings: [{ name: 'Orders', enabled: true, trigger: 'event = "Order Completed"', settings: { url: `${receiver.url}/mapped`, method: 'POST', headers: {}, data: { order: { '@path': '$.properties.orderId' } } } }],
    });
    expect((await test(actions.id)).json()).toMatchObject({ status: 'filtered', filtered: { reason: 'trigger' } });
    const mapped = (await test(actions.id, { event: { type: 'track', event: 'Order Completed', userId: 'u-test', properties: { orderId: 'o-1' } } })).json();
    expect(mapped).toMatchObject({ status: 'attempted', attempt: { outcome: 'success', httpStatus: 200, mapping: 'Orders' } });
    expect(receiver.requests.filter((r) => r.path.endsWith('/mapped')).map((r) => JSON.parse(r.body))).toEqual([{ order: 'o-1' }]);

    // A paused destination holds it: pending at once, sent on resume.
    await system.store.destinations.update(refusing.id, { paused: true });
    const held = await test(refusing.id);
    expect([held.statusCode, held.json().status]).toEqual([202, 'pending']);
    await system.app.inject({ method: 'PATCH', url: `/admin/destinations/${refusing.id}`, headers: admin, payload: { paused: false } });
    await receiver.waitForMessage(held.json().messageId);

    // Audited once per test, under its own action.
    const audit = await system.app.inject({ method: 'GET', url: `/admin/audit?action=destination.test&target=${destination.id}`, headers: admin });
    expect(audit.json().entries).toHaveLength(2);
  }, 60_000);

  it('refuses a bad event naming the field, a switched-off destination, and a token without destinations:write', async () => {
    const { system } = run;
    const { source } = await system.store.sources.create('Test refusals');
    const destination = await system.store.destinations.create(source.id, { name: 'Refusals', enabled: true, webhooks: [{ url: run.receiver.url, headers: {} }] });
    const cases: Array<[unknown, string]> = [
      [{ event: { type: 'purchase', userId: 'u' } }, 'event.type: must be one of identify, track, page, screen, group, alias'],
      [{ event: { type: 'track', userId: 'u' } }, 'event.event: is required for track calls'],
      [{ event: { type: 'track', event: 'x' } }, 'event.userId: userId or anonymousId is required for track calls'],
      [{ event: { type: 'track', event: 'x', userId: 'u', timestamp: 'yesterday' } }, 'event.timestamp: must be an ISO 8601 date-time'],
      [{ event: 'not an object' }, 'event'],
      [{ surprise: 1 }, 'surprise'],
    ];
    for (const [payload, words] of cases) {
      const reply = await test(destination.id, payload);
      expect([reply.statusCode, reply.json().message]).toEqual([400, expect.stringContaining(words)]);
    }
    const off = await system.store.destinations.create(source.id, { name: 'Off', enabled: false, webhooks: [{ url: run.receiver.url, headers: {} }] });
    const refusedOff = await test(off.id);
    expect([refusedOff.statusCode, refusedOff.json().message]).toEqual([409, expect.stringContaining('switched off')]);
    expect((await test('dst_missing')).statusCode).toBe(404);
    const minted = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: admin, payload: { name: 'Tester read-only', scopes: ['read'] } });
    const readOnly = await test(destination.id, undefined, { authorization: `Bearer ${minted.json().token}` });
    expect([readOnly.statusCode, readOnly.json().message]).toEqual([403, expect.stringContaining('destinations:write')]);
  }, 60_000);

  it("sends a test event from the destination's page and shows its attempt, the filter that stopped it, or the field the API refused", async () => {
    const { system, receiver, page, origin } = run;
    receiver.respond(() => ({ status: 200 }));
    const { source } = await system.store.sources.create('Portal test events');
    const destination = await system.store.destinations.create(source.id, { name: 'Tried from the portal', enabled: true, webhooks: [{ url: `${receiver.url}/portal-test`, headers: {} }] });
    await system.store.destinationFilters.create(destination.id, { title: 'Drop staff', enabled: true, if: "userId = 'staff'", actions: [{ type: 'DROP' }] }, 10);
    await openDestination(page, origin, destination.id);
    const form = page.getByRole('form', { name: 'Send test event' });
    const send = form.getByRole('button', { name: 'Send test event' });

    // Empty: the sample; its attempt (outcome, response status, duration) and a link to its delivery.
    await send.click();
    const attempted = form.locator('.test-result[data-status="attempted"]');
    await attempted.waitFor();
    expect(await attempted.getAttribute('data-outcome')).toBe('success');
    expect(await attempted.textContent()).toMatch(/success HTTP 200 in \d+ ms/);
    await screenshot(page, 'destination-test-event');

    // A typed event the filter drops: the filter named, nothing sent.
    const eventField = form.getByLabel(/^Event/);
    await eventField.fill(JSON.stringify({ type: 'track', event: 'Signed Up', userId: 'staff' }));
    await send.click();
    await expect(form.locator('.test-result[data-status="filtered"]').textContent()).resolves.toBe('Nothing sent: filtered by filter "Drop staff".');

    // The API's 400, beside the field.
    await eventField.fill(JSON.stringify({ type: 'track', userId: 'u1' }));
    await send.click();
    await expect(form.getByRole('alert').textContent()).resolves.toBe('event.event: is required for track calls');
    expect(run.pageErrors).toEqual([]);
  }, 60_000);
});
