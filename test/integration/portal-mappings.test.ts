import { openDestinations, usePortal } from '../helpers/portal';
import { deliveryResult, send } from '../helpers/system';

/**
 * Issue 33 in the operators' portal, in a real headless Chromium on the real API, Temporal and
 * worker: an actions destination's mappings edited as JSON with the preview beside it, and the next
 * message reaching the real receiver as the preview said.
 */

const run = usePortal();

it("edits an actions destination's mappings as JSON, previews an event, and ingestion sends what the preview showed", async () => {
  const { system, receiver, page, origin } = run;
  const { source, writeKey } = await system.store.sources.create('Portal mappings');
  const destination = await system.store.destinations.create(source.id, {
    name: 'Slack',
    enabled: true,
    type: 'actions',
    webhooks: [],
    mappings: [{ name: 'Orders', enabled: true, trigger: 'event = "Order Completed"', settings: { url: receiver.url, method: 'POST', headers: { 'X-Key': 'portal-header-secret' }, data: { text: { '@template': 'Order {{properties.orderId}}' } } } }],
  });

  await openDestinations(page, origin, source.id);
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  const mappings = card.getByLabel('Mappings (JSON)');
  await mappings.waitFor();
  const shown = await mappings.inputValue();
  expect(shown).toContain('"@template": "Order {{properties.orderId}}"');
  expect(shown).not.toContain('portal-header-secret');

  // A directive the kit refuses: the API's 400, naming the mapping, field and directive, on the page.
  const edited = JSON.parse(shown) as { settings: { data: unknown } }[];
  await mappings.fill(JSON.stringify([{ ...edited[0], settings: { ...edited[0].settings, data: { text: { '@nonsense': 1 } } } }]));
  await card.getByRole('button', { name: 'Save mappings' }).click();
  await card.locator('.mappings .error', { hasText: '@nonsense' }).waitFor();
  expect(await card.locator('.mappings .error').textContent()).toContain('mappings[0].settings.data: mapping "Orders": /text has an invalid directive: @nonsense.');

  // Saved with the masked header sent back as shown: the header keeps its value.
  await mappings.fill(JSON.stringify([{ ...edited[0], settings: { ...edited[0].settings, data: { text: { '@template': 'Order {{properties.orderId}} by {{userId}}' } } } }]));
  await card.getByRole('button', { name: 'Save mappings' }).click();
  await page.locator('#status', { hasText: 'Mappings saved' }).waitFor();
  const saved = (await system.store.destinations.get(destination.id))!.mappings[0];
  expect(saved.settings).toMatchObject({ headers: { 'X-Key': 'portal-header-secret' }, data: { text: { '@template': 'Order {{properties.orderId}} by {{userId}}' } } });

  const reloaded = page.locator(`section[data-destination-id="${destination.id}"]`);
  const event = { type: 'track', event: 'Order Completed', userId: 'u-9', properties: { orderId: 'o-42' } };
  await reloaded.getByLabel('Event to preview (JSON)').fill(JSON.stringify(event));
  await reloaded.getByRole('button', { name: 'Preview saved mappings' }).click();
  await reloaded.locator('.mapping-preview', { hasText: 'Order o-42 by u-9' }).waitFor();
  const preview = JSON.parse((await reloaded.locator('.mapping-preview').textContent())!) as { matched: boolean; request: { body: unknown; headers: Record<string, string> } }[];
  expect(preview[0]).toMatchObject({ matched: true, request: { body: { text: 'Order o-42 by u-9' }, headers: { 'x-key': '********' } } });

  await send(system.app, writeKey, 'track', { ...event, messageId: 'portal-mapped' });
  expect(await deliveryResult(system.client, source.id, 'portal-mapped')).toMatchObject({ ok: true });
  const arrived = receiver.requests.find((r) => r.body.includes('o-42'))!;
  expect(JSON.parse(arrived.body)).toEqual({ text: 'Order o-42 by u-9' });
  expect(arrived.headers['x-key']).toBe('portal-header-secret');
}, 120_000);
