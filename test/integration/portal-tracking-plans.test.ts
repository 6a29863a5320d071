import { ADMIN_TOKEN, basicAuth } from '../helpers/system';
import { logIn, screenshot, usePortal, waitFor } from '../helpers/portal';

/**
 * The tracking plans' portal page, in a real headless Chromium on the real API: a plan's rules (planned and
 * required names) and, per connected source, its violations of the last day.
 */

const run = usePortal();
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

it('shows a plan\'s rules and its source\'s violations', async () => {
  const { system, page, origin, pageErrors } = run;
  const { source, writeKey } = await system.store.sources.create('Portal tracking plan');
  const plan = (await system.app.inject({ method: 'POST', url: '/admin/tracking-plans', headers: auth, payload: { name: 'Portal plan', description: 'Checkout' } })).json<{ id: string }>();
  const rule = { type: 'TRACK', key: 'Signed Up', version: 1, jsonSchema: { labels: {}, properties: { properties: { properties: { plan: { type: 'string' }, seats: { type: 'integer' } }, required: ['plan'] } } } };
  expect((await system.app.inject({ method: 'PUT', url: `/admin/tracking-plans/${plan.id}/rules`, headers: auth, payload: { rules: [rule] } })).statusCode).toBe(200);
  expect((await system.app.inject({ method: 'POST', url: `/admin/tracking-plans/${plan.id}/sources`, headers: auth, payload: { sourceId: source.id } })).statusCode).toBe(201);
  const batch = [{ type: 'track', userId: 'portal-tp', event: 'Signed Up', messageId: 'portal-tp-1', properties: { seats: 'two' } }];
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);

  await page.goto(`${origin}/portal/`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Sources' }).waitFor();
  await page.getByRole('link', { name: 'Tracking plans' }).click();
  const section = page.locator(`section[data-plan-id="${plan.id}"]`);
  await section.waitFor();
  expect(await section.getByRole('heading', { name: 'Portal plan' }).count()).toBe(1);
  expect(await section.locator('tr[data-rule="TRACK:Signed Up:1"]').textContent()).toBe('TRACKSigned Up1plan*, seats');

  // Violations are flushed every HEALTH_FLUSH_INTERVAL: reload until they show.
  const violations = section.locator(`table[data-violations="${source.id}"]`);
  await waitFor(async () => {
    await page.reload();
    await section.waitFor();
    return (await violations.count()) === 1;
  }, 'the source\'s violations to show');
  const rows = (await violations.locator('tbody tr').allTextContents()).sort();
  expect(rows).toHaveLength(2);
  expect(rows.join('\n')).toContain('properties.plan');
  expect(rows.join('\n')).toContain('Required');
  expect(rows.join('\n')).toContain('properties.seats');
  expect(rows.join('\n')).toContain('Datatype');
  // Sources by name, the id on hover only: no one looks an id up.
  expect(await section.locator('p.plan-sources').textContent()).toBe('Sources: Portal tracking plan');
  expect(await violations.locator('caption').textContent()).toBe('Source Portal tracking plan: violations in the last 24 h');
  expect(await section.locator(`[title="${source.id}"]`).count()).toBe(2);
  expect(await section.textContent()).not.toContain(source.id);
  await screenshot(page, 'tracking-plans');

  // A read-only token sees the same names (the sources list needs only read).
  const reader = (await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: auth, payload: { name: 'tracking plans reader', scopes: ['read'] } })).json<{ token: string }>().token;
  const readOnly = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  readOnly.on('pageerror', (error) => pageErrors.push(error.message));
  await logIn(readOnly, origin, reader);
  await readOnly.goto(`${origin}/portal/#/tracking-plans`);
  const seen = readOnly.locator(`section[data-plan-id="${plan.id}"]`);
  await seen.locator(`table[data-violations="${source.id}"]`).waitFor();
  expect(await seen.locator('p.plan-sources').textContent()).toBe('Sources: Portal tracking plan');
  await screenshot(readOnly, 'read-only-tracking-plans');
  expect(pageErrors).toEqual([]);
});
