import { ADMIN_TOKEN, deliveryResult, send } from '../helpers/system';
import { logIn, screenshot, usePortal, waitFor } from '../helpers/portal';

/**
 * The Functions page in a real headless Chromium on the real API, worker and sandbox: each function
 * with its versions (deployable), its instances (a function destination, an insert function
 * instance, a function source) and their recent errors, and a test console that runs the latest
 * version for real against a receiver on 127.0.0.1. A read-only token sees it all, and neither
 * the console nor a deploy button it could press.
 */

const run = usePortal();
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

const DESTINATION_CODE = `
async function onTrack(event, settings) {
  console.log('sending ' + event.event);
  if (event.event === 'Refused') throw new ValidationError('no order on ' + event.event);
  await fetch(settings.url + '/portal-fn', { method: 'POST', body: JSON.stringify({ event: event.event }) });
}
`;
const SOURCE_CODE = "async function onRequest(request, settings) { throw new TypeError('unreadable body ' + request.json().id); }";
const INSERT_CODE = 'function onTrack(event) { return event; }';

it('lists functions with versions, instances and recent errors, runs the test console, deploys; read-only sees it read-only', async () => {
  const { system, receiver, page, origin, pageErrors } = run;
  const call = async (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: object) => {
    const response = await system.app.inject({ method, url, headers: auth, ...(payload && { payload }) });
    expect({ url, status: response.statusCode }).toEqual({ url, status: method === 'POST' ? 201 : 200 });
    return response.json<Record<string, string>>();
  };
  const urlSetting = [{ name: 'url', label: 'URL', description: 'Where orders go', type: 'STRING', required: true, sensitive: false }];
  const dfn = await call('POST', '/admin/functions', { code: DESTINATION_CODE, displayName: 'Orders to CRM', resourceType: 'DESTINATION', settings: urlSetting });
  await call('PATCH', `/admin/functions/${dfn.id}`, { code: `// v2\n${DESTINATION_CODE}` });
  const sfn = await call('POST', '/admin/functions', { code: SOURCE_CODE, displayName: 'Shop webhooks', resourceType: 'SOURCE' });
  const ifn = await call('POST', '/admin/functions', { code: INSERT_CODE, displayName: 'Enrich orders', resourceType: 'INSERT_DESTINATION' });

  const { source, writeKey } = await system.store.sources.create('Checkout');
  const fnDestination = await call('POST', `/admin/sources/${source.id}/destinations`, { type: 'function', name: 'CRM', enabled: true, functionId: dfn.id, settings: { url: receiver.url } });
  const webhooks = await call('POST', `/admin/sources/${source.id}/destinations`, { name: 'Warehouse', enabled: true, webhooks: [{ url: `${receiver.url}/warehouse` }] });
  const instance = await call('POST', '/admin/insert-function-instances', { functionId: ifn.id, integrationId: webhooks.id, enabled: true, name: 'Enrich before warehouse', settings: {} });
  const shop = await call('POST', '/admin/sources', { name: 'Shop', functionId: sfn.id, settings: {} });

  // A rejected delivery and a failed request: the errors the page lists.
  await send(system.app, writeKey, 'track', { userId: 'u-portal-fn', event: 'Refused', messageId: 'portal-fn-refused' });
  expect(await deliveryResult(system.client, source.id, 'portal-fn-refused')).toMatchObject({ ok: false });
  const webhook = new URL(shop.webhookUrl);
  const posted = await system.app.inject({ method: 'POST', url: `${webhook.pathname}${webhook.search}`, headers: { 'content-type': 'application/json' }, payload: { id: 'ord-7' } });
  expect(posted.statusCode).toBe(200);
  await waitFor(async () => (await call('GET', `/admin/sources/${shop.id}/function-requests`)).requests.length > 0, 'the failed source-function request');
  await waitFor(async () => (await call('GET', `/admin/deliveries?destinationId=${fnDestination.id}&status=failed`)).deliveries.length > 0, 'the failed delivery to be listed');

  await logIn(page, origin);
  await page.getByRole('link', { name: 'Functions' }).click();
  const list = page.locator('table.functions');
  await list.waitFor();
  expect(await list.locator(`tr[data-function-id="${dfn.id}"]`).textContent()).toMatch(/^Orders to CRMDestination functionv1 \(latest v2\)/);
  // Each of the three listed (other files' functions may share this slot's store).
  for (const fn of [dfn, sfn, ifn]) expect(await list.locator(`tr[data-function-id="${fn.id}"]`).count()).toBe(1);
  await screenshot(page, 'functions');

  await list.getByRole('link', { name: 'Orders to CRM' }).click();
  const versions = page.locator('section[data-part="versions"]');
  await versions.waitFor();
  expect(await versions.locator('tr[data-version="1"] .status').textContent()).toBe('deployed');
  expect(await page.locator(`section[data-part="instances"] tr[data-instance="${fnDestination.id}"]`).textContent()).toBe('DestinationCRM under Checkouton');
  const refused = page.locator('section[data-part="errors"] tr[data-error="portal-fn-refused"]');
  expect(await refused.getByRole('link').getAttribute('href')).toBe(`#/deliveries/${source.id}/portal-fn-refused`);

  // The console runs the latest version for real: its fetch reaches the receiver, and nothing is delivered.
  const consoleForm = page.getByRole('form', { name: 'Test the function' });
  await consoleForm.getByLabel('Event').fill(JSON.stringify({ type: 'track', event: 'Tested', userId: 'u-console' }));
  await consoleForm.getByLabel('Settings').fill(JSON.stringify({ url: receiver.url }));
  await consoleForm.getByRole('button', { name: 'Run' }).click();
  const output = page.locator('.test-run');
  await output.locator('[data-out="logs"]').waitFor();
  expect(await output.locator('[data-out="logs"]').textContent()).toBe('log: sending Tested');
  expect(await output.locator('table.requests').textContent()).toMatch(new RegExp(`^POST${receiver.url}/portal-fn200`));
  expect(receiver.requests.filter((r) => r.path.endsWith('/portal-fn') && r.body.includes('Tested'))).toHaveLength(1);
  // Bad JSON is named before anything runs.
  await consoleForm.getByLabel('Settings').fill('{url:');
  await consoleForm.getByRole('button', { name: 'Run' }).click();
  expect(await output.getByRole('alert').textContent()).toMatch(/^settings: is not JSON/);
  await consoleForm.getByLabel('Settings').fill(JSON.stringify({ url: receiver.url }));
  await consoleForm.getByRole('button', { name: 'Run' }).click();
  await output.locator('[data-out="logs"]').waitFor();
  await screenshot(page, 'function');

  await versions.getByRole('button', { name: 'Deploy v2' }).click();
  await versions.locator('tr[data-version="2"] .status').waitFor();
  expect((await call('GET', `/admin/functions/${dfn.id}`)).deployedVersion).toBe(2);

  // A source function's failed request shows its reason, and its error to payloads:read.
  await page.goto(`${origin}/portal/#/functions/${sfn.id}`);
  const sourceError = page.locator('section[data-part="errors"] tbody tr');
  await sourceError.waitFor();
  expect(await sourceError.textContent()).toMatch(/v1function:error: TypeErrorTypeError: unreadable body ord-7$/);
  expect(await page.locator(`section[data-part="instances"] tr[data-instance="${shop.id}"]`).textContent()).toBe('SourceShopon');
  await page.goto(`${origin}/portal/#/functions/${ifn.id}`);
  await page.locator('section[data-part="instances"]').waitFor();
  expect(await page.locator(`tr[data-instance="${instance.id}"]`).textContent()).toBe('Enrich before warehousebefore Warehouse under Checkouton');

  // Read-only: the same page, no console and no deploy button it could press.
  const reader = (await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: auth, payload: { name: 'functions reader', scopes: ['read'] } })).json<{ token: string }>().token;
  const readOnly = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  readOnly.on('pageerror', (error) => pageErrors.push(error.message));
  await logIn(readOnly, origin, reader);
  await readOnly.goto(`${origin}/portal/#/functions/${dfn.id}`);
  await readOnly.locator('section[data-part="versions"]').waitFor();
  expect(await readOnly.getByRole('form', { name: 'Test the function' }).count()).toBe(0);
  expect(await readOnly.locator('section[data-part="console"] [data-needs-scope="destinations:write"]').textContent()).toMatch(/^Testing this function: needs the destinations:write scope/);
  expect(await readOnly.getByRole('button', { name: 'Deploy v1' }).isDisabled()).toBe(true);
  expect(await readOnly.locator('section[data-part="errors"] tr[data-error="portal-fn-refused"]').count()).toBe(1);
  await screenshot(readOnly, 'read-only-function');
  await readOnly.goto(`${origin}/portal/#/functions/${sfn.id}`);
  const hidden = readOnly.locator('section[data-part="errors"] tbody tr');
  await hidden.waitFor();
  expect(await hidden.textContent()).toMatch(/function:error: TypeErrorneeds payloads:read$/);
  expect(await hidden.textContent()).not.toContain('ord-7');
  expect(pageErrors).toEqual([]);
});
