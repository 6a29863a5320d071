import { ADMIN_TOKEN, basicAuth } from '../helpers/system';
import { logIn, screenshot, usePortal, waitFor } from '../helpers/portal';

/**
 * The tracking plans' portal page, in a real headless Chromium on the real API: a plan made and
 * edited in the portal (the API's 400 beside the field it names, its own words), rules added and
 * edited, sources connected and disconnected by name, each source's controls and forwarding
 * changed, and violations in the same sentence the API answers; a read-only token sees it all
 * with no control to change it.
 */

const run = usePortal();
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The bot rule: a COMMON rule that excludes crawlers by their user agent. */
const BOT_RULE = JSON.stringify({ properties: { context: { properties: { userAgent: { not: { pattern: 'bot|crawler|spider' } } } } } });
const SIGNED_UP = JSON.stringify({ labels: {}, properties: { properties: { properties: { plan: { type: 'string' }, seats: { type: 'integer' } }, required: ['plan'] } } });

it('makes and edits a plan, its rules, sources and controls, and shows violations in the API\'s words', async () => {
  const { system, page, origin, pageErrors } = run;
  const { source, writeKey } = await system.store.sources.create('Portal tracking plan');
  const { source: audit } = await system.store.sources.create('Plan audit');
  const api = (method: 'GET' | 'POST', url: string, payload?: object) => system.app.inject({ method, url, headers: auth, ...(payload && { payload }) });

  await logIn(page, origin);
  await page.goto(`${origin}/portal/#/tracking-plans`);
  await page.getByRole('heading', { name: 'Tracking plans' }).waitFor();

  // Created in the portal: the API's own 400 beside the field it names, nothing checked in the browser.
  const create = page.locator('form[aria-label="Create a tracking plan"]');
  await page.getByText('Create a tracking plan', { exact: true }).click();
  await create.getByRole('button', { name: 'Create plan' }).click();
  const refusedName = (await api('POST', '/admin/tracking-plans', { name: '' })).json<{ message: string }>().message;
  await create.locator('[data-error-for="name"]').filter({ hasText: refusedName }).waitFor();
  await create.getByLabel('Name').fill('Portal plan');
  await create.getByLabel('Description').fill('Checkout');
  await create.getByRole('button', { name: 'Create plan' }).click();
  const plan = page.locator('section[data-plan-id]').filter({ has: page.getByRole('heading', { name: 'Portal plan' }) });
  await plan.waitFor();
  const planId = (await plan.getAttribute('data-plan-id'))!;
  expect(await plan.locator('p.plan-description').textContent()).toBe('Checkout');

  // Renamed in its own form.
  await plan.getByText('Edit name and description').click();
  await plan.locator('form[aria-label="Plan"]').getByLabel('Name').fill('Portal plan v2');
  await plan.locator('form[aria-label="Plan"]').getByRole('button', { name: 'Save plan' }).click();
  await page.locator(`section[data-plan-id="${planId}"] h2`).filter({ hasText: 'Portal plan v2' }).waitFor();
  const section = page.locator(`section[data-plan-id="${planId}"]`);

  // A rule the API refuses: its message, word for word, beside the schema.
  const ruleForm = () => section.locator('form[aria-label="Rule"]');
  await ruleForm().getByLabel('Type').selectOption('COMMON');
  await ruleForm().getByLabel('JSON Schema of the whole message').fill(JSON.stringify({ properties: { context: { properties: { userAgent: { not: { patern: 'bot' } } } } } }));
  await ruleForm().getByRole('button', { name: 'Add rule' }).click();
  const refusedRule = (await system.app.inject({ method: 'PATCH', url: `/admin/tracking-plans/${planId}/rules`, headers: auth, payload: { rules: [{ type: 'COMMON', version: 1, jsonSchema: { properties: { context: { properties: { userAgent: { not: { patern: 'bot' } } } } } } }] } })).json<{ message: string }>().message;
  expect(refusedRule).toContain('unknown keyword "patern"');
  await ruleForm().locator('[data-error-for="jsonSchema"]').filter({ hasText: refusedRule }).waitFor();
  await ruleForm().getByLabel('JSON Schema of the whole message').fill(BOT_RULE);
  await ruleForm().getByRole('button', { name: 'Add rule' }).click();
  await section.locator('tr[data-rule="COMMON::1"]').waitFor();
  // A TRACK rule, then edited: the table shows what the API holds.
  await ruleForm().getByLabel('Type').selectOption('TRACK');
  await ruleForm().getByLabel('Event name (key)').fill('Signed Up');
  await ruleForm().getByLabel('JSON Schema of the whole message').fill(SIGNED_UP.replace(',"seats":{"type":"integer"}', ''));
  await ruleForm().getByRole('button', { name: 'Add rule' }).click();
  await section.locator('tr[data-rule="TRACK:Signed Up:1"]').filter({ hasText: 'plan*' }).waitFor();
  await section.locator('tr[data-rule="TRACK:Signed Up:1"]').getByRole('button', { name: 'Edit' }).click();
  expect(await ruleForm().getByLabel('Event name (key)').inputValue()).toBe('Signed Up');
  await ruleForm().getByLabel('JSON Schema of the whole message').fill(SIGNED_UP);
  await ruleForm().getByRole('button', { name: 'Save rule' }).click();
  await section.locator('tr[data-rule="TRACK:Signed Up:1"]').filter({ hasText: 'plan*, seats' }).waitFor();
  expect(await section.locator('tr[data-rule="TRACK:Signed Up:1"] td').first().textContent()).toBe('TRACK');

  // Sources connected by name (their ids are never the words), and disconnected.
  const connect = section.locator('form[aria-label="Connect a source"]');
  expect(await connect.locator('option').allTextContents()).toEqual(expect.arrayContaining(['Portal tracking plan', 'Plan audit']));
  await connect.getByLabel('Source').selectOption({ label: 'Plan audit' });
  await connect.getByRole('button', { name: 'Connect' }).click();
  await section.locator(`button[data-disconnect="${audit.id}"]`).click();
  await section.locator('form[aria-label="Connect a source"] option', { hasText: 'Plan audit' }).waitFor({ state: 'attached' });
  expect((await api('GET', `/admin/tracking-plans/${planId}/sources`)).json()).toEqual({ sourceIds: [] });
  // A source another plan holds: the API's 409, word for word, beside the choice.
  const other = (await api('POST', '/admin/tracking-plans', { name: 'Other plan' })).json<{ id: string }>();
  const taken = await api('POST', `/admin/tracking-plans/${other.id}/sources`, { sourceId: source.id });
  expect(taken.statusCode).toBe(201);
  await section.locator('form[aria-label="Connect a source"]').getByLabel('Source').selectOption({ label: 'Portal tracking plan' });
  await section.locator('form[aria-label="Connect a source"]').getByRole('button', { name: 'Connect' }).click();
  const conflict = (await api('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId: source.id })).json<{ message: string }>().message;
  expect(conflict).toContain('is connected to another tracking plan');
  await section.locator('[data-error-for="sourceId"]').filter({ hasText: conflict }).waitFor();
  expect((await system.app.inject({ method: 'DELETE', url: `/admin/tracking-plans/${other.id}`, headers: auth })).statusCode).toBe(204);
  await section.locator('form[aria-label="Connect a source"]').getByRole('button', { name: 'Connect' }).click();
  await section.locator(`button[data-disconnect="${source.id}"]`).waitFor();
  // The deleted plan is gone from the page (other files' plans may share this slot's store).
  expect(await page.locator(`section[data-plan-id="${other.id}"]`).count()).toBe(0);
  expect(await section.locator('p.plan-sources .named').textContent()).toBe('Portal tracking plan');

  // The source's controls and forwarding, in words, saved as one PATCH.
  const controls = section.locator(`form[data-controls-form="${source.id}"]`);
  expect(await controls.locator('[data-setting="track.allowEventOnViolations"] select').inputValue()).toBe('true');
  await controls.locator('[data-setting="track.allowUnplannedEvents"] select').selectOption({ label: 'block it' });
  await controls.locator('[data-setting="identify.commonEventOnViolations"] select').selectOption({ label: 'omit the offending traits' });
  await controls.locator('[data-setting="forwardingViolationsTo"] select').selectOption({ label: 'Plan audit' });
  // Nowhere, then the other sources by name (never this one, never an id); other files' sources share this slot's store.
  const targets = await controls.locator('[data-setting="forwardingViolationsTo"] option').allTextContents();
  expect(targets[0]).toBe('nowhere');
  expect(targets).toContain('Plan audit');
  expect(targets).not.toContain('Portal tracking plan');
  expect(targets.filter((text) => /^src_/.test(text))).toEqual([]);
  await controls.getByRole('button', { name: 'Save controls' }).click();
  await waitFor(async () => (await api('GET', `/admin/sources/${source.id}/settings`)).json<{ forwardingViolationsTo?: string }>().forwardingViolationsTo === audit.id, 'the controls to be saved');
  expect((await api('GET', `/admin/sources/${source.id}/settings`)).json()).toMatchObject({
    track: { allowUnplannedEvents: false, allowEventOnViolations: true },
    identify: { commonEventOnViolations: 'OMIT_TRAITS' },
    forwardingViolationsTo: audit.id,
  });

  // Violations in the API's sentence: the bot rule reads as a person says it.
  const batch = [
    { type: 'track', userId: 'portal-tp', event: 'Signed Up', messageId: 'portal-tp-1', properties: { seats: 'two' } },
    { type: 'track', userId: 'portal-tp', event: 'Signed Up', messageId: 'portal-tp-2', properties: { plan: 'team' }, context: { userAgent: 'Googlebot/2.1' } },
  ];
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
  const violations = section.locator(`table[data-violations="${source.id}"]`);
  // Violations are flushed every HEALTH_FLUSH_INTERVAL: reload until they show.
  await waitFor(async () => {
    await page.reload();
    await section.waitFor();
    return (await violations.locator('tbody tr').count()) === 3;
  }, 'the source\'s violations to show');
  const fromApi = (await api('GET', `/admin/sources/${source.id}/violations`)).json<{ violations: Array<{ description: string }> }>().violations.map((v) => v.description).sort();
  expect(fromApi).toEqual(['context.userAgent matches the excluded pattern bot|crawler|spider', 'properties.plan is required', 'properties.seats must be an integer']);
  expect((await violations.locator('td.violation-text').allTextContents()).sort()).toEqual(fromApi);
  expect(await violations.locator('caption').textContent()).toBe('Source Portal tracking plan: violations in the last 24 h');
  expect(await section.textContent()).not.toContain(source.id);
  await screenshot(page, 'tracking-plans');

  // A read-only token sees the same plan, names and controls in words, and nothing to change them with.
  const reader = (await api('POST', '/admin/tokens', { name: 'tracking plans reader', scopes: ['read'] })).json<{ token: string }>().token;
  const readOnly = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  readOnly.on('pageerror', (error) => pageErrors.push(error.message));
  await logIn(readOnly, origin, reader);
  await readOnly.goto(`${origin}/portal/#/tracking-plans`);
  const seen = readOnly.locator(`section[data-plan-id="${planId}"]`);
  await seen.locator(`table[data-violations="${source.id}"]`).waitFor();
  expect(await seen.locator('p.plan-sources').textContent()).toBe('Sources: Portal tracking plan');
  expect(await seen.locator(`table[data-controls="${source.id}"] [data-setting="track.allowUnplannedEvents"]`).textContent()).toBe('block it');
  expect(await seen.locator(`table[data-controls="${source.id}"] [data-setting="forwardingViolationsTo"]`).textContent()).toBe('Plan audit');
  expect(await seen.locator('form, select, textarea, input, button').count()).toBe(0);
  // Names are payload fields: without payloads:read each row says so instead of its sentence.
  expect(await seen.locator(`table[data-violations="${source.id}"] tbody tr`).allTextContents()).toEqual(Array(3).fill(expect.stringMatching(/^trackneeds payloads:read(Datatype|Required|Composition)1/)));
  expect(await readOnly.locator('[data-needs-scope="destinations:write"]').count()).toBeGreaterThan(0);
  await screenshot(readOnly, 'read-only-tracking-plans');
  expect(pageErrors).toEqual([]);
});
