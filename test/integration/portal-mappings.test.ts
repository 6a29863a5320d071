import { openDestination, screenshot, usePortal } from '../helpers/portal';
import { deliveryResult, send } from '../helpers/system';

/**
 * Actions destinations' mappings in the operators' portal, in a real headless Chromium on the real API, Temporal
 * and worker: an actions destination's mappings edited as a form per mapping (key → directive rows
 * for the data), the draft previewed before it is saved, raw JSON one toggle away, and the next
 * message reaching the real receiver as the preview said.
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
  expect(await text.getByLabel('Directive').inputValue()).toBe('Order {{properties.orderId}}');
  expect(await page.content()).not.toContain('portal-header-secret');

  // The draft: a changed template and a new @path field, previewed before anything is saved.
  await text.getByLabel('Directive').fill('Order {{properties.orderId}} by {{userId}}');
  await mapping.getByRole('button', { name: 'Add field' }).click();
  const total = mapping.locator('.field-row').nth(1);
  await total.getByLabel('Key').fill('total');
  await total.getByLabel('Kind').selectOption('path');
  await total.getByLabel('Directive').fill('$.properties.total');
  const event = { type: 'track', event: 'Order Completed', userId: 'u-9', properties: { orderId: 'o-42', total: 42 } };
  await card.getByLabel('Event to preview (JSON)').fill(JSON.stringify(event));
  await card.getByRole('button', { name: 'Preview the draft' }).click();
  await card.locator('.mapping-preview', { hasText: 'Order o-42 by u-9' }).waitFor();
  const preview = JSON.parse((await card.locator('.mapping-preview').textContent())!) as { matched: boolean; request: { body: unknown; headers: Record<string, string> } }[];
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
  expect(await mapping.locator('.field-row').nth(1).getByLabel('Directive').inputValue()).toBe('$.properties.total');

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
