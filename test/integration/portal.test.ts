import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Analytics } from '../../src/client';
import { PORTAL_CSP } from '../../src/portal/routes';
import { NEVER, createDefinition } from '../helpers/personas';
import { launchChromium, listenForBrowser } from '../helpers/browser';
import { bareIds, screenshot, waitFor } from '../helpers/portal';
import type { Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, useSystem, type TestSystem } from '../helpers/system';

/**
 * The operators' portal in a real headless Chromium, on the real API (listening on a port) and the
 * run's real Temporal and worker: log in, make a source and a destination whose receiver refuses,
 * send an event with the client library, find the failed delivery, fix the receiver, redeliver it
 * and watch it arrive. Each page is photographed into docs/portal/ for docs/portal.md.
 */

let system: TestSystem;
let receiver: Receiver;
let origin: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every request the page made, and anything it logged as an error. */
const requested: string[] = [];
const consoleErrors: string[] = [];

useSystem((s, r) => {
  system = s;
  receiver = r;
});

beforeAll(async () => {
  origin = await listenForBrowser(system);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('request', (request) => requested.push(request.url()));
  page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
  page.on('pageerror', (error) => consoleErrors.push(error.message));
});

afterAll(async () => {
  await browser?.close();
});

const shot = (name: string) => screenshot(page, name);

/** Opens a panel of the destination's page (they start closed); the URL remembers it across reloads. */
async function openPanel(key: string): Promise<void> {
  const panel = page.locator(`details[data-panel="${key}"]`);
  if ((await panel.getAttribute('open')) === null) await panel.locator('summary').click();
  await panel.locator('.panel-body > :not(p.muted:only-child)').first().waitFor();
}

/** Re-applies the deliveries filter until the row of this message shows this status (visibility is eventually consistent). */
async function waitForListedStatus(messageId: string, status: string): Promise<void> {
  // Newest first: a redelivered message's latest run is its first row.
  const row = page.locator(`tr[data-message-id="${messageId}"]`).first();
  const deadline = Date.now() + 30_000;
  for (;;) {
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('table.deliveries tbody tr').first().waitFor();
    if ((await row.count()) > 0 && (await row.locator('.status').textContent()) === status) return;
    if (Date.now() > deadline) throw new Error(`delivery ${messageId} not listed as ${status}: ${await page.locator('table.deliveries tbody').textContent()}`);
    await page.waitForTimeout(500);
  }
}

it('serves /portal with a strict Content-Security-Policy and asks for the admin token', async () => {
  const response = await page.goto(`${origin}/portal`);
  expect(response?.url()).toBe(`${origin}/portal/`);
  expect(response?.headers()['content-security-policy']).toBe(PORTAL_CSP);
  expect(PORTAL_CSP).toContain("default-src 'self'");
  // The login page is the login only: no navigation, no Log out.
  await page.getByLabel('Admin token').waitFor();
  expect(await page.locator('#nav').isVisible()).toBe(false);
  expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
  expect(await page.getByRole('link').count()).toBe(0);
  await page.getByLabel('Admin token').fill('not-the-token');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');
  await shot('login');
  // The settings the page reads are behind the token like the admin API.
  expect((await system.app.inject({ method: 'GET', url: '/portal/settings.json' })).statusCode).toBe(401);
});

it('an operator finds a failed delivery, fixes the receiver, redelivers it and sees it delivered', async () => {
  receiver.respond(() => ({ status: 400 }));
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Sources' }).waitFor();

  // A source: its write key is shown once, with the analytics.js snippet.
  await page.getByLabel('Name', { exact: true }).fill('Portal shop');
  await page.getByRole('button', { name: 'Create source' }).click();
  const writeKey = await page.locator('#write-key').inputValue();
  expect(writeKey).toMatch(/^[\w-]{20,}$/);
  expect(await page.locator('#snippet').inputValue()).toContain(`writeKey: '${writeKey}', cdnURL: '${origin}'`);
  const sourceId = (await page.locator('#created-source section').getAttribute('data-source-id'))!;
  expect(sourceId).toMatch(/^src_/);
  await shot('sources');

  // A destination pointing at the receiver, with a static header: the page shows its name only.
  await page.getByRole('link', { name: 'Add a destination to this source →' }).click();
  await page.locator('details[data-panel="new-destination"] > summary').click();
  // The classic (webhooks) destination's form; the actions destination's has a Name of its own.
  await page.getByRole('form', { name: 'Create a destination' }).getByLabel('Name', { exact: true }).fill('Order hook');
  await page.getByLabel('Webhook URLs, one per line, tried in order').fill(receiver.url);
  await page.getByLabel('Static headers (Name: value), for every URL').fill('X-Api-Key: hunter2-secret-value');
  await page.getByLabel('Shared secret (X-Signature)').fill('portal-shared-secret');
  await page.getByRole('button', { name: 'Create destination' }).click();
  // The new destination's own page opens, its panels closed until asked for.
  const card = page.locator('section[data-destination-id]');
  await card.waitFor();
  const destinationId = (await card.getAttribute('data-destination-id'))!;
  expect(await card.locator('details[open]').count()).toBe(0);
  await openPanel('webhooks');
  await openPanel('signing');
  await expect(card.locator('table.webhooks').textContent()).resolves.toContain('X-Api-Key');
  expect(await page.content()).not.toContain('hunter2-secret-value');
  expect(await card.locator('.shared-secret-state').textContent()).toBe('Set: every request carries X-Signature.');

  // Two events from the client library; the receiver answers 400, a permanent failure.
  const analytics = new Analytics({ writeKey, endpoint: origin });
  const track = (orderId: string) => {
    const sent = analytics.track({ userId: 'portal-user', event: 'Order Completed', properties: { orderId, total: 42 } });
    if (!sent.ok) throw sent.error;
    return sent.messageId;
  };
  const messageId = track('o-1');
  const laterId = track('o-2');
  expect(await analytics.close()).toEqual({ delivered: 2, failed: 0 });
  await Promise.all([receiver.waitForMessage(messageId), receiver.waitForMessage(laterId)]);

  // The list shows them failed.
  await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
  await page.getByLabel('Source').first().selectOption(sourceId);
  await waitForListedStatus(messageId, 'failed');
  await waitForListedStatus(laterId, 'failed');
  await shot('deliveries-failed');

  // The URL's health: every attempt of the day failed, the last error is the 400, the chart's bar says 0 %.
  // From the list of the source's destinations to this one's page.
  await page.getByRole('link', { name: 'Destinations', exact: true }).click();
  await page.getByRole('link', { name: 'Order hook' }).click();
  await openPanel('webhooks');
  const webhookRow = card.locator('table.webhooks tr[data-webhook-index="0"]');
  await waitFor(async () => {
    await page.reload();
    await webhookRow.waitFor();
    return (await webhookRow.locator('.success-rate').textContent())!.includes('0/2');
  }, 'the two failed attempts in the URL\'s health');
  expect(await webhookRow.locator('.success-rate').textContent()).toMatch(/^0 %/);
  expect(await webhookRow.locator('.last-error').textContent()).toContain('400');
  expect(await webhookRow.locator('svg.chart rect[data-rate="0.000"]').count()).toBeGreaterThan(0);
  await shot('destinations-failing');

  // Its attempts: one POST to webhook 1, HTTP 400, permanent; a link to the same run in the Temporal Web UI.
  await page.goto(`${origin}/portal/#/deliveries/${sourceId}/${messageId}`);
  const attempts = page.locator(`section[data-destination-id="${destinationId}"] ol.timeline li`);
  await attempts.first().waitFor();
  expect(await attempts.count()).toBe(1);
  expect(await attempts.first().textContent()).toMatch(/webhook 1, round 1 .*HTTP 400 permanent/);
  expect(await page.locator('#delivery-status').textContent()).toBe('failed');
  // The destination and source by name, their ids in small type.
  expect(await page.locator(`section[data-destination-id="${destinationId}"] h2`).textContent()).toContain(`Destination Order hook ${destinationId}`);
  expect(await page.locator('table.facts').textContent()).toContain(`Portal shop ${sourceId}`);
  const workflowId = `message:${sourceId}:${messageId}`;
  const { runId } = await system.client.workflow.getHandle(workflowId).describe();
  expect(await page.locator('#temporal-link').getAttribute('href')).toBe(
    `http://127.0.0.1:${system.config.temporalUiPort}/namespaces/${system.config.temporalNamespace}/workflows/${encodeURIComponent(workflowId)}/${runId}/history`,
  );
  await shot('delivery-failed');

  // The receiver is fixed; one click sends the same message again and the page follows it to delivered.
  receiver.respond(() => ({ status: 200 }));
  const before = receiver.requests.length;
  await page.getByRole('button', { name: 'Redeliver' }).click();
  await page.locator('#delivery-status .status-delivered').waitFor({ timeout: 30_000 });
  const redelivered = receiver.requests.slice(before).map((r) => JSON.parse(r.body) as { messageId: string });
  expect(redelivered.map((b) => b.messageId)).toEqual([messageId]);
  expect(await attempts.last().textContent()).toMatch(/HTTP 200 success/);
  expect(await page.locator('table.facts').textContent()).toContain(`previous run ${runId}`);
  expect(await bareIds(page, { [sourceId]: 'Portal shop', [destinationId]: 'Order hook' })).toEqual([]);
  await shot('delivery-redelivered');

  // What else failed for this destination in the last hour goes again in one job, with its progress:
  // the other message; the first one's latest run is delivered, so it is skipped.
  await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
  const bulk = page.getByRole('form', { name: 'Redeliver failed deliveries' });
  await bulk.getByLabel('Source').selectOption(sourceId);
  await bulk.getByLabel('Destination (optional)').selectOption(destinationId);
  await bulk.getByRole('button', { name: 'Redeliver failed deliveries' }).click();
  await page.locator('.bulk-progress[data-job-status="completed"]').waitFor({ timeout: 30_000 });
  expect(await page.locator('.bulk-progress').textContent()).toContain('2 matched · 1 redelivered · 1 finished · 1 skipped');
  const laterRequests = receiver.requests.filter((r) => (JSON.parse(r.body) as { messageId: string }).messageId === laterId);
  expect(laterRequests).toHaveLength(2);
  await waitForListedStatus(laterId, 'delivered');
  await shot('deliveries-bulk-redelivered');

  // Both names on the list and on one delivery, for an admin and a read-only token; never a bare id where a name exists.
  const names = { [sourceId]: 'Portal shop', [destinationId]: 'Order hook' };
  expect(await bareIds(page, names)).toEqual([]);
  const minted = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Deliveries reader', scopes: ['read'] } });
  const readOnly = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await readOnly.goto(`${origin}/portal/`);
  await readOnly.getByLabel('Admin token').fill(minted.json<{ token: string }>().token);
  await readOnly.getByRole('button', { name: 'Log in' }).click();
  await readOnly.locator('#whoami').filter({ hasText: /\S/ }).waitFor();
  await readOnly.goto(`${origin}/portal/#/deliveries`);
  await readOnly.locator(`tr[data-message-id="${laterId}"]`).first().waitFor();
  expect(await bareIds(readOnly, names)).toEqual([]);
  await screenshot(readOnly, 'read-only-deliveries');
  await readOnly.goto(`${origin}/portal/#/deliveries/${sourceId}/${messageId}`);
  await readOnly.locator(`section[data-destination-id="${destinationId}"] ol.timeline li`).first().waitFor();
  expect(await bareIds(readOnly, names)).toEqual([]);
  await screenshot(readOnly, 'read-only-delivery');
  await readOnly.context().close();

  // The destination's page: the URL's health after the two redeliveries, on/off and the secrets round-trip through the API.
  await page.goto(`${origin}/portal/#/destinations/${destinationId}?open=webhooks`);
  await waitFor(async () => {
    await page.reload();
    await webhookRow.waitFor();
    return (await webhookRow.locator('.success-rate').textContent())!.includes('2/4');
  }, 'the two redeliveries in the URL\'s health');
  expect(await webhookRow.locator('.success-rate').textContent()).toMatch(/^50 %/);
  await shot('destination-health');
  const switches = card.locator('.switches');
  await switches.getByRole('button', { name: 'Switch off' }).click();
  await switches.getByRole('button', { name: 'Switch on' }).waitFor();
  expect((await system.store.destinations.get(destinationId))!.enabled).toBe(false);
  await switches.getByRole('button', { name: 'Switch on' }).click();
  await switches.getByRole('button', { name: 'Switch off' }).waitFor();
  expect((await system.store.destinations.get(destinationId))!.enabled).toBe(true);
  // Hold and resume, and a rate limit, from the page; the page says which holds.
  await openPanel('rate-limit');
  await openPanel('consent');
  await openPanel('signing');
  await card.getByRole('button', { name: 'Pause' }).click();
  await card.getByRole('button', { name: 'Resume' }).waitFor();
  expect((await system.store.destinations.get(destinationId))!.paused).toBe(true);
  expect(await card.locator('.flow-state').textContent()).toMatch(/^Paused since .*messages are held/);
  await card.getByRole('button', { name: 'Resume' }).click();
  await card.getByRole('button', { name: 'Pause' }).waitFor();
  expect((await system.store.destinations.get(destinationId))!.paused).toBe(false);
  await card.getByLabel('Rate limit (requests per second, empty for none)').fill('25');
  await card.getByRole('button', { name: 'Save rate limit' }).click();
  await waitFor(async () => (await system.store.destinations.get(destinationId))!.maxRequestsPerSecond === 25, 'the rate limit saved');
  await card.locator('.flow-state', { hasText: 'Rate limit: 25 requests per second.' }).waitFor();
  expect(await card.locator('.flow').textContent()).toContain('Waited without sending');
  expect(page.url()).toContain('open=webhooks,rate-limit,consent,signing');
  await card.getByLabel('Rate limit (requests per second, empty for none)').fill('');
  await card.getByRole('button', { name: 'Save rate limit' }).click();
  await waitFor(async () => (await system.store.destinations.get(destinationId))!.maxRequestsPerSecond === null, 'the rate limit cleared');
  // Saved is not yet shown: the page reloads after the PATCH and replaces the card's forms, with
  // whatever was typed into them (a secret typed before it was lost: a flake in a fresh-clone run).
  await card.locator('.flow-state', { hasText: 'No rate limit.' }).waitFor();
  await card.getByLabel('New shared secret (rotates it)').fill('rotated-secret');
  await card.getByRole('button', { name: 'Rotate shared secret' }).click();
  await waitFor(async () => (await system.store.destinations.get(destinationId))!.sharedSecret === 'rotated-secret', 'the rotated shared secret');
  await page.locator('#status', { hasText: 'Shared secret saved' }).waitFor();
  await card.getByRole('button', { name: 'Generate signing secret' }).click();
  const signingSecret = await card.getByLabel('Signing secret').inputValue();
  expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect((await system.store.destinations.get(destinationId))!.signing?.current).toBe(signingSecret);

  // The consent categories a destination needs, and what happens to events without preferences.
  const consentOf = async () => (await system.store.destinations.get(destinationId))!.consent;
  expect(await card.locator('.consent-state').textContent()).toBe('Needs no consent category: gets events whatever their consent. Events without consent preferences are delivered.');
  await card.getByLabel('Consent categories it needs, comma-separated (empty for none)').fill('analytics, advertising');
  await card.getByLabel('Events without consent preferences').selectOption('drop');
  await card.getByRole('button', { name: 'Save consent' }).click();
  await waitFor(async () => (await consentOf()).whenAbsent === 'drop', 'the consent settings saved');
  expect(await consentOf()).toEqual({ categories: ['analytics', 'advertising'], whenAbsent: 'drop' });
  await card.locator('.consent-state', { hasText: 'Gets an event only if it grants every one of: analytics, advertising. Events without consent preferences are dropped.' }).waitFor();
  expect(await card.getByLabel('Consent categories it needs, comma-separated (empty for none)').inputValue()).toBe('analytics, advertising');
  await shot('destination-consent');
  // Back to the defaults: the events below carry no consent preferences.
  await card.getByLabel('Consent categories it needs, comma-separated (empty for none)').fill('');
  await card.getByLabel('Events without consent preferences').selectOption('deliver');
  await card.getByRole('button', { name: 'Save consent' }).click();
  await waitFor(async () => (await consentOf()).whenAbsent === 'deliver', 'the consent settings back to the defaults');
  expect(await consentOf()).toEqual({ categories: [], whenAbsent: 'deliver' });
  await card.locator('.consent-state', { hasText: 'Needs no consent category' }).waitFor();

  // A 410 Gone switches the URL off; the page shows why and switches it back on.
  receiver.respond(() => ({ status: 410 }));
  const gone = new Analytics({ writeKey, endpoint: origin });
  const goneSent = gone.track({ userId: 'portal-user', event: 'Order Completed', properties: { orderId: 'o-3' } });
  expect(goneSent.ok).toBe(true);
  await gone.close();
  await waitFor(async () => Boolean((await system.store.destinations.get(destinationId))!.webhooks[0].disabled), 'the 410 to switch the URL off');
  receiver.respond(() => ({ status: 200 }));
  await page.reload();
  await webhookRow.getByRole('button', { name: 'Re-enable' }).waitFor();
  expect(await webhookRow.textContent()).toContain('disabled');
  await webhookRow.getByRole('button', { name: 'Re-enable' }).click();
  await waitFor(async () => !(await system.store.destinations.get(destinationId))!.webhooks[0].disabled, 'the URL switched back on');
  await webhookRow.locator('.status-ok').waitFor();

  // The source's destinations as a list: name, type, state and the last hour's outcomes.
  await page.getByRole('link', { name: 'Destinations', exact: true }).click();
  const listed = page.locator(`table.destinations tr[data-destination-id="${destinationId}"]`);
  await listed.locator('td.failed-hour', { hasText: /\d/ }).waitFor();
  expect(await listed.locator('td').allTextContents()).toEqual(['Order hook', 'webhooks', 'on', expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/)]);

  // Audiences and computed traits: definition, schedule, pause/resume, run now and its result.
  const audience = await createDefinition(system.app, sourceId, 'audiences', { name: 'Big spenders', definition: { trait: 'plan', op: 'exists' }, schedule: NEVER, paused: true });
  await page.getByRole('link', { name: 'Audiences & traits' }).click();
  const row = page.locator(`tr[data-id="${audience.id}"]`);
  await row.waitFor();
  expect(await row.textContent()).toContain('paused');
  expect(await row.textContent()).toContain('"op": "exists"');
  await row.getByRole('button', { name: 'Resume' }).click();
  await row.getByRole('button', { name: 'Pause' }).waitFor();
  await row.getByRole('button', { name: 'Run now' }).click();
  await waitFor(async () => {
    await page.reload();
    await row.waitFor();
    return (await row.textContent())!.includes('version 1');
  }, 'the audience\'s first sync in its row');
  expect(await row.textContent()).toContain('active');
  await shot('personas');

  // Nothing from anywhere but this origin; the token never in a URL.
  expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
  expect(requested.filter((url) => url.includes(ADMIN_TOKEN))).toEqual([]);
  expect(consoleErrors.filter((text) => !text.includes('401'))).toEqual([]);
});
