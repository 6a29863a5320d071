import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium, listenForBrowser } from '../helpers/browser';
import { bareIds, screenshot } from '../helpers/portal';
import { ADMIN_TOKEN, useSystem, type TestSystem } from '../helpers/system';

/**
 * Scoped tokens in the portal, in a real headless Chromium on the real API: any token logs in, the page
 * says which one and what it may do, and the audit log is a page for a token with the admin scope.
 * A read-only token sees what it may not change disabled, the scope named; a page it
 * cannot read says which scope it needs; the audit log names what each change touched.
 */
let system: TestSystem;
let origin: string;
let browser: Browser;

useSystem((s) => {
  system = s;
});

beforeAll(async () => {
  origin = await listenForBrowser(system);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function mint(name: string, scopes: string[]): Promise<string> {
  const reply = await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name, scopes } });
  expect(reply.statusCode).toBe(201);
  return reply.json<{ token: string }>().token;
}

/** The API's 4xx under a form's field, once the answer has come (the click returns before it). */
async function shownProblem(form: Locator, name: string): Promise<string | null> {
  const problem = form.locator(`[data-field="${name}"]`, { hasText: `${name}: ` });
  await problem.waitFor();
  return problem.textContent();
}

async function logIn(token: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#whoami').filter({ hasText: /\S/ }).waitFor();
  return page;
}

it('logs a read token in, names it and its scopes, and offers no audit log', async () => {
  const page = await logIn(await mint('Support desk', ['read']));
  await expect(page.locator('#whoami').textContent()).resolves.toBe('Support desk (read)');
  await expect(page.getByRole('link', { name: 'Audit log' }).isVisible()).resolves.toBe(false);
  await page.getByRole('heading', { name: 'Sources' }).waitFor();
});

it('refuses a token without the read scope at the login, naming the scope', async () => {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(await mint('Codec only', ['payloads:read']));
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toContain('lacks the read scope');
});

it('shows an admin the audit log, newest first, filtered by action', async () => {
  await mint('Listed in the log', ['read']);
  const page = await logIn(await mint('Auditor', ['read', 'admin']));
  await expect(page.locator('#whoami').textContent()).resolves.toBe('Auditor (read, admin)');
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log' }).waitFor();
  await page.getByLabel('Action').fill('token.create');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.locator('tr[data-audit-id]').first().waitFor();
  const actions = await page.locator('tr[data-audit-id] td:nth-child(3)').allTextContents();
  expect(new Set(actions)).toEqual(new Set(['token.create']));
  await expect(page.locator('tr[data-audit-id]').first().textContent()).resolves.toContain('ADMIN_TOKEN');
});

it("shows a read-only token each change it may not make, disabled or replaced, naming the scope it needs", async () => {
  const { source } = await system.store.sources.create('Read-only shop');
  const destination = await system.store.destinations.create(source.id, { name: 'Read-only hook', enabled: true, webhooks: [{ url: 'https://example.com/hook', headers: {} }] });
  await system.store.destinationFilters.create(destination.id, { title: 'No tests', enabled: true, if: "event = 'Test'", actions: [{ type: 'DROP' }] }, 10);
  const page = await logIn(await mint('Read-only viewer', ['read']));

  // The list: its destinations, and instead of the forms that create them, the scope they need.
  await page.goto(`${origin}/portal/#/destinations?source=${source.id}`);
  await page.locator(`table.destinations tr[data-destination-id="${destination.id}"]`).waitFor();
  expect(await page.locator('p.needs-scope').textContent()).toBe('Creating destinations: needs the destinations:write scope, which this token lacks.');
  expect(await page.getByRole('button', { name: 'Create destination' }).count()).toBe(0);

  // The destination's page: every switch disabled, its tooltip and small type naming the scope.
  await page.getByRole('link', { name: 'Read-only hook' }).click();
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  const switchOff = card.locator('.switches').getByRole('button', { name: 'Switch off' });
  await switchOff.waitFor();
  expect(await switchOff.isDisabled()).toBe(true);
  expect(await switchOff.getAttribute('title')).toBe('Needs the destinations:write scope');
  expect(await card.locator('.switches .needs-scope').allTextContents()).toEqual(['needs destinations:write', 'needs destinations:write']);

  // Filters: the list to read and a draft to preview (read may), changes disabled.
  await card.locator('details[data-panel="filters"] > summary').click();
  const row = card.locator('table.filters tbody tr');
  await row.waitFor();
  for (const name of ['Switch off', 'Delete']) expect(await row.getByRole('button', { name }).isDisabled()).toBe(true);
  expect(await card.getByRole('button', { name: 'Add filter' }).isDisabled()).toBe(true);
  await card.getByRole('button', { name: 'Preview' }).click();
  await card.locator('.preview-verdict').waitFor();

  // Replays need operate; the rate limit's form is replaced by the scope it needs.
  await card.locator('details[data-panel="replays"] > summary').click();
  const dryRun = card.getByRole('button', { name: 'Dry run' });
  await dryRun.waitFor();
  expect(await dryRun.isDisabled()).toBe(true);
  expect(await dryRun.getAttribute('title')).toBe('Needs the operate scope');
  await card.locator('details[data-panel="rate-limit"] > summary').click();
  await card.locator('.rate-limit p.needs-scope', { hasText: 'Changing the rate limit: needs the destinations:write scope' }).waitFor();
  expect(await card.getByRole('button', { name: 'Save rate limit' }).count()).toBe(0);
  await screenshot(page, 'read-only-destination');

  // Deliveries: no bulk redelivery form, the scope it needs instead.
  await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
  await page.locator('p.needs-scope', { hasText: 'Redelivering what failed: needs the operate scope' }).waitFor();
});

it('tells a token which scope a page needs instead of "Something went wrong"', async () => {
  const page = await logIn(await mint('No audit', ['read']));
  await page.goto(`${origin}/portal/#/audit`);
  const alert = page.locator('.forbidden');
  await alert.waitFor();
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Audit log');
  expect(await alert.textContent()).toBe('This page needs a token with the admin scope. This token has: read.');
  expect(await page.getByText('Something went wrong').count()).toBe(0);
  await screenshot(page, 'read-only-audit');
});

it('keeps the page the user moved to when the page they left finishes loading later', async () => {
  const page = await (await browser.newContext()).newPage();
  // The sources list answers only once the user has moved on to the audit log.
  let release!: () => void;
  const moved = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  let asked!: () => void;
  const listing = new Promise<void>((resolve) => (asked = resolve));
  await page.route('**/admin/sources', async (route) => {
    held += 1;
    asked();
    await moved;
    await route.continue();
  });
  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(await mint('Slow lister', ['read']));
  await page.getByRole('button', { name: 'Log in' }).click();
  await listing;
  await page.goto(`${origin}/portal/#/audit`);
  await page.locator('.forbidden').waitFor();
  const answered = page.waitForResponse('**/admin/sources');
  release();
  await answered;
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
  expect(held).toBe(1);
  expect(await page.getByRole('heading', { level: 1 }).allTextContents()).toEqual(['Audit log']);
  expect(await page.locator('.forbidden').count()).toBe(1);
});

it('names in the audit log what each change touched, the id on hover', async () => {
  const { source } = await system.store.sources.create('Audited shop');
  const destination = await system.store.destinations.create(source.id, { name: 'Audited hook', enabled: true, webhooks: [{ url: 'https://example.com/hook', headers: {} }] });
  const auditor = await mint('Name reader', ['read', 'admin', 'destinations:write']);
  const patched = await system.app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: { authorization: `Bearer ${auditor}` }, payload: { enabled: false } });
  expect(patched.statusCode).toBe(200);
  const page = await logIn(auditor);
  await page.goto(`${origin}/portal/#/audit?target=${destination.id}`);
  const target = page.locator(`tr[data-audit-id] td.audit-target .named[data-id="${destination.id}"]`);
  await target.first().waitFor();
  expect(await target.first().textContent()).toBe('Audited hook');
  expect(await target.first().getAttribute('title')).toBe(destination.id);
  // The actor by its token's name, its id on hover.
  expect(await page.locator('tr[data-audit-id] td:nth-child(2)').first().textContent()).toBe('Name reader');
  await screenshot(page, 'audit');
});

it('shows a name made of markup as text, in the audit log and on the destination list (hostile input is data)', async () => {
  const { source } = await system.store.sources.create('Hostile names');
  const hostile = '<img src=x onerror="window.__pwned=1"><b>Hook</b>';
  const destination = await system.store.destinations.create(source.id, { name: hostile, enabled: true, webhooks: [{ url: 'https://example.com/hook', headers: {} }] });
  const auditor = await mint('Hostile reader', ['read', 'admin', 'destinations:write']);
  expect((await system.app.inject({ method: 'PATCH', url: `/admin/destinations/${destination.id}`, headers: { authorization: `Bearer ${auditor}` }, payload: { enabled: false } })).statusCode).toBe(200);
  const page = await logIn(auditor);
  await page.goto(`${origin}/portal/#/audit?target=${destination.id}`);
  const target = page.locator(`td.audit-target .named[data-id="${destination.id}"]`).first();
  await target.waitFor();
  expect(await target.textContent()).toBe(hostile);
  await page.goto(`${origin}/portal/#/destinations?source=${source.id}`);
  const link = page.locator(`tr[data-destination-id="${destination.id}"] a`);
  await link.waitFor();
  expect(await link.textContent()).toBe(hostile);
  expect(await page.locator('main img, main b').count()).toBe(0);
  expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
});

it('makes a token on the Tokens page: the API\'s rules beside each field, the token shown once, revoked from the next request', async () => {
  const page = await logIn(await mint('Token keeper', ['read', 'admin', 'operate']));
  page.on('dialog', (dialog) => void dialog.accept());
  await page.getByRole('link', { name: 'Tokens', exact: true }).click();
  const form = page.getByRole('form', { name: 'New token' });
  await form.waitFor();
  // Only the scopes this token holds can be granted, as the API would refuse the others.
  for (const [scope, disabled] of [['read', false], ['operate', false], ['destinations:write', true], ['payloads:read', true]] as const) {
    expect(await form.locator(`input[name="scopes"][value="${scope}"]`).isDisabled()).toBe(disabled);
  }
  // The API's 400s, each beside its field.
  await form.getByLabel(/^Name/).fill('On-call bot');
  await form.getByRole('button', { name: 'Create token' }).click();
  await expect(shownProblem(form, 'scopes')).resolves.toMatch(/^scopes: /);
  await form.locator('input[name="scopes"][value="read"]').check();
  await form.getByLabel(/^Expires/).fill('2001-01-01T00:00');
  await form.getByRole('button', { name: 'Create token' }).click();
  await expect(shownProblem(form, 'expiresAt')).resolves.toBe('expiresAt: must be in the future');
  await form.getByLabel(/^Expires/).fill('');
  await form.getByRole('button', { name: 'Create token' }).click();

  // Shown once, and it works.
  const secret = page.locator('.secret-once input');
  await secret.waitFor();
  const made = await secret.inputValue();
  expect(made).toMatch(/^swy_/);
  const asMade = () => system.app.inject({ method: 'GET', url: '/admin/sources', headers: { authorization: `Bearer ${made}` } });
  expect((await asMade()).statusCode).toBe(200);
  const row = page.locator('table.tokens tr', { hasText: 'On-call bot' });
  expect(await row.locator('td').nth(1).textContent()).toBe('read');
  await screenshot(page, 'tokens');
  // Never again: a reload lists it without it.
  await page.reload();
  await row.waitFor();
  expect(await page.locator('.secret-once').count()).toBe(0);
  expect(await page.content()).not.toContain(made);

  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.locator('.status-failed', { hasText: 'revoked' }).waitFor();
  expect((await asMade()).statusCode).toBe(401);
});

it('adds an operational endpoint with the API\'s rules beside each field, its generated secret shown once, and switches it off', async () => {
  const page = await logIn(await mint('Ops wiring', ['read', 'destinations:write']));
  await page.getByRole('link', { name: 'Operational webhooks', exact: true }).click();
  const form = page.getByRole('form', { name: 'New operational endpoint' });
  await form.waitFor();
  const url = form.getByLabel(/^URL/);
  const add = form.getByRole('button', { name: 'Add endpoint' });
  // Refused at save, not at the first incident: the cloud metadata address.
  await url.fill('http://169.254.169.254/x');
  await add.click();
  await expect(shownProblem(form, 'url')).resolves.toMatch(/^url: /);
  await url.fill('https://alerts.example.com/switchyard-ops');
  await form.getByLabel(/^Secret/).fill('not-a-secret');
  await add.click();
  await expect(shownProblem(form, 'secret')).resolves.toMatch(/^secret: /);
  expect(await form.locator('[data-field="url"]').isHidden()).toBe(true);
  await form.getByLabel(/^Secret/).fill('');
  await form.locator('input[name="eventTypes"][value="message.attempt.exhausted"]').check();
  await add.click();
  const secret = page.locator('.secret-once input');
  await secret.waitFor();
  expect(await secret.inputValue()).toMatch(/^whsec_/);
  const row = page.locator('table.operational-endpoints tr', { hasText: 'alerts.example.com' });
  expect(await row.locator('td').nth(1).textContent()).toBe('message.attempt.exhausted');
  await screenshot(page, 'operational-webhooks');
  await row.getByRole('button', { name: 'Switch off' }).click();
  await row.getByRole('button', { name: 'Switch on' }).waitFor();
  expect(await row.locator('td').nth(3).textContent()).toBe('off');
  expect(await page.locator('.secret-once').count()).toBe(0);
});

it('shows a read-only token the operational endpoints read-only and no tokens at all, naming the scopes', async () => {
  await system.app.inject({ method: 'POST', url: '/admin/operational-endpoints', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { url: 'https://hooks.example.com/read-only-ops', eventTypes: [] } });
  const page = await logIn(await mint('Ops reader', ['read']));
  expect(await page.getByRole('link', { name: 'Tokens', exact: true }).count()).toBe(0);
  await page.getByRole('link', { name: 'Operational webhooks', exact: true }).click();
  const row = page.locator('table.operational-endpoints tr', { hasText: 'read-only-ops' });
  await row.waitFor();
  for (const name of ['Switch off', 'Delete']) expect(await row.getByRole('button', { name }).getAttribute('title')).toBe('Needs the destinations:write scope');
  expect(await page.locator('p.needs-scope').textContent()).toBe('Adding an endpoint: needs the destinations:write scope, which this token lacks.');
  await screenshot(page, 'read-only-operational-webhooks');
  await page.goto(`${origin}/portal/#/tokens`);
  await expect(page.locator('.forbidden').textContent()).resolves.toBe('This page needs a token with the admin scope. This token has: read.');
  await screenshot(page, 'read-only-tokens');
  // The test event is a real delivery: destinations:write.
  const { source } = await system.store.sources.create('Read-only tests');
  const destination = await system.store.destinations.create(source.id, { name: 'Not for testing', enabled: true, webhooks: [{ url: 'https://example.com/hook', headers: {} }] });
  await page.goto(`${origin}/portal/#/destinations/${destination.id}`);
  const test = page.getByRole('button', { name: 'Send test event' });
  await test.waitFor();
  expect([await test.isDisabled(), await test.getAttribute('title')]).toEqual([true, 'Needs the destinations:write scope']);
  await screenshot(page, 'read-only-test-event');
});

/** Every name the team gave (sources, destinations, plans), by id, as the API lists them now. */
async function teamNames(): Promise<Record<string, string>> {
  const get = async <T>(url: string): Promise<T> => (await system.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json<T>();
  const names: Record<string, string> = {};
  for (const source of (await get<{ sources: { id: string; name: string }[] }>('/admin/sources')).sources) {
    names[source.id] = source.name;
    for (const d of (await get<{ destinations: { id: string; name: string }[] }>(`/admin/sources/${source.id}/destinations`)).destinations) names[d.id] = d.name;
  }
  for (const plan of (await get<{ trackingPlans: { id: string; name: string }[] }>('/admin/tracking-plans')).trackingPlans ?? []) names[plan.id] = plan.name;
  return names;
}

/** Opens a page by its hash and waits until it and every open panel have drawn (no "Loading…" left). */
async function visit(page: Page, hash: string): Promise<void> {
  await page.goto(`${origin}/portal/#/${hash}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  // A locator, not waitForFunction: the portal's CSP forbids the eval its polling needs.
  await page.locator('main').getByText('Loading…').first().waitFor({ state: 'hidden' });
}

it('names every source, destination and plan on every page, for an admin and a read-only token, never a bare id', async () => {
  const { source } = await system.store.sources.create('Named shop');
  const destination = await system.store.destinations.create(source.id, { name: 'Named hook', enabled: true, webhooks: [{ url: 'https://example.com/named', headers: {} }] });
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const plan = (await system.app.inject({ method: 'POST', url: '/admin/tracking-plans', headers: auth, payload: { name: 'Named plan' } })).json<{ id: string }>();
  expect((await system.app.inject({ method: 'POST', url: `/admin/tracking-plans/${plan.id}/sources`, headers: auth, payload: { sourceId: source.id } })).statusCode).toBeLessThan(300);
  // An audit row whose target is inside the source (a redelivery of one of its messages names `<sourceId>/<messageId>`).
  await system.store.audit.append({ at: new Date().toISOString(), actor: { tokenId: null, name: 'admin' }, action: 'delivery.redeliver', target: `${source.id}/named-message`, outcome: 'success', requestId: 'names-check', ip: '127.0.0.1', changed: [] });
  const everyName = await teamNames();
  expect([everyName[source.id], everyName[destination.id], everyName[plan.id]]).toEqual(['Named shop', 'Named hook', 'Named plan']);
  // Checked for this test's own source, destination and plan: other files' rows share this slot's
  // store, and a hostile one's name may itself hold an id-shaped string.
  const names = { [source.id]: everyName[source.id], [destination.id]: everyName[destination.id], [plan.id]: everyName[plan.id] };

  const panels = 'overview,webhooks,filters,replays,rate-limit,consent,signing';
  const pages: [string, string][] = [
    ['sources', 'sources'],
    [`destinations?source=${source.id}`, 'destinations'],
    [`destinations/${destination.id}?open=${panels}`, 'destination-panels'],
    ['deliveries', 'deliveries'],
    [`deliveries/live/${source.id}`, 'live'],
    ['personas', 'personas'],
    ['tracking-plans', 'tracking-plans'],
    ['functions', 'functions'],
    ['operational-webhooks', 'operational-webhooks'],
    ['tokens', 'tokens'],
    ['audit', 'audit'],
  ];
  const admin = await logIn(ADMIN_TOKEN);
  const readOnly = await logIn(await mint('Names reader', ['read']));
  for (const [hash, name] of pages) {
    await visit(admin, hash);
    expect({ page: name, bare: await bareIds(admin, names) }).toEqual({ page: name, bare: [] });
    await visit(readOnly, hash);
    expect({ page: `read-only ${name}`, bare: await bareIds(readOnly, names) }).toEqual({ page: `read-only ${name}`, bare: [] });
    if (['sources', 'destinations', 'destination-panels', 'personas'].includes(name)) await screenshot(readOnly, `read-only-${name}`);
  }
});
