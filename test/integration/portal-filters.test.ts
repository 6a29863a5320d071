import { openDestination, screenshot, usePortal } from '../helpers/portal';
import { deliveryResult, send } from '../helpers/system';

/**
 * Destination filters in the operators' portal, in a real headless Chromium on the real
 * API, Temporal and worker: an operator adds a filter, previews an event under it, and the next
 * message through ingestion reaches the real receiver as the preview said. The preview runs what
 * is in the form: a draft, before it is saved, named when it drops the event.
 */

const run = usePortal();

beforeAll(() => {
  // Delete asks for confirmation.
  run.page.on('dialog', (dialog) => void dialog.accept());
});

it('adds a DROP_PROPERTIES filter, previews the event without the property, and ingestion delivers it without it', async () => {
  const { system, receiver, page, origin } = run;
  const { source, writeKey } = await system.store.sources.create('Portal filters');
  const destination = await system.store.destinations.create(source.id, { name: 'Ads hook', enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });

  await openDestination(page, origin, destination.id, ['filters', 'overview']);
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  const form = card.getByRole('form', { name: 'Filter' });
  await form.waitFor();
  expect(await card.locator('div.filters').textContent()).toContain('No filter');

  // Bad FQL: the API's 400 names the field and the column, shown beside that field.
  await form.getByLabel('Title').fill('No emails to ads');
  await form.getByLabel('If (FQL)').fill("event = 'Order Completed' and (");
  await form.getByLabel(/^Actions/).fill(JSON.stringify([{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }]));
  await form.getByRole('button', { name: 'Add filter' }).click();
  const ifError = card.locator(`#filter-${destination.id}-if-error`);
  await ifError.filter({ hasText: 'column' }).waitFor();
  expect(await ifError.textContent()).toMatch(/^if: at column \d+: /);
  expect(await form.getByLabel('If (FQL)').getAttribute('aria-invalid')).toBe('true');
  expect(await system.store.destinationFilters.list(destination.id)).toEqual([]);

  // A draft previews as it is in the form, before it is saved, named when it stops the event.
  await form.getByLabel('Title').fill('Drop orders (draft)');
  await form.getByLabel('If (FQL)').fill("event = 'Order Completed'");
  await form.getByLabel(/^Actions/).fill(JSON.stringify([{ type: 'DROP' }]));
  await card.getByLabel('Event (JSON), as a source would send it').fill(JSON.stringify({ type: 'track', event: 'Order Completed', userId: 'u-1' }));
  await card.getByRole('button', { name: 'Preview' }).click();
  await card.locator('.preview-verdict').waitFor();
  expect(await card.locator('.preview-of').textContent()).toContain('The filter in the form (Drop orders (draft)), as edited, not saved');
  expect(await card.locator('.preview-verdict').textContent()).toBe('not delivered Matched: Drop orders (draft) Dropped by Drop orders (draft).');
  await screenshot(page, 'destination-filters');
  expect(await system.store.destinationFilters.list(destination.id)).toEqual([]);

  // Fixed, it is saved and listed.
  await form.getByLabel('Title').fill('No emails to ads');
  await form.getByLabel(/^Actions/).fill(JSON.stringify([{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }]));
  await form.getByLabel('If (FQL)').fill("event = 'Order Completed'");
  await form.getByRole('button', { name: 'Add filter' }).click();
  const row = card.locator('table.filters tbody tr');
  await row.first().waitFor();
  await page.locator('#status', { hasText: 'Filter No emails to ads added' }).waitFor();
  expect(await row.textContent()).toContain("event = 'Order Completed'");
  const [saved] = await system.store.destinationFilters.list(destination.id);
  expect(saved).toMatchObject({ title: 'No emails to ads', enabled: true, if: "event = 'Order Completed'", actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'] } }] });

  // Preview: delivered, the body as it would be sent, without the email, and the filter that matched.
  const event = { type: 'track', event: 'Order Completed', userId: 'u-1', properties: { total: 42, email: 'someone@example.com' } };
  await card.getByLabel('Event (JSON), as a source would send it').fill(JSON.stringify(event));
  await card.getByRole('button', { name: 'Preview' }).click();
  await card.locator('.preview-verdict').waitFor();
  expect(await card.locator('.preview-of').textContent()).toBe('The saved filters:');
  expect(await card.locator('.preview-verdict').textContent()).toBe('delivered Matched: No emails to ads');
  const previewed = JSON.parse((await card.locator('.preview-body').textContent())!) as { properties: Record<string, unknown> };
  expect(previewed.properties).toEqual({ total: 42 });

  // Through ingestion to the real receiver: the same event arrives without the email.
  await send(system.app, writeKey, 'track', { ...event, messageId: 'filtered-email' });
  expect(await deliveryResult(system.client, source.id, 'filtered-email')).toMatchObject({ ok: true });
  const arrived = JSON.parse((await receiver.waitForMessage('filtered-email')).body) as { properties: Record<string, unknown> };
  expect(arrived.properties).toEqual({ total: 42 });

  // Edit, switch off, delete: each through the API, the page showing the result.
  await row.getByRole('button', { name: 'Edit' }).click();
  await form.getByLabel('Description').fill('Ads never see emails');
  await form.getByRole('button', { name: 'Save filter' }).click();
  await page.locator('#status', { hasText: 'Filter No emails to ads saved' }).waitFor();
  expect((await system.store.destinationFilters.list(destination.id))[0].description).toBe('Ads never see emails');
  await row.getByRole('button', { name: 'Switch off' }).click();
  await row.getByRole('button', { name: 'Switch on' }).waitFor();
  expect((await system.store.destinationFilters.list(destination.id))[0].enabled).toBe(false);
  await card.getByRole('button', { name: 'Preview' }).click();
  await card.locator('.preview-verdict', { hasText: 'No filter matched.' }).waitFor();

  // A DROP filter's drops show in the card's overview under its title.
  const drop = await system.store.destinationFilters.create(destination.id, { title: 'Drop test events', enabled: true, if: "event = 'Test'", actions: [{ type: 'DROP' }] }, 10);
  await send(system.app, writeKey, 'track', { type: 'track', event: 'Test', userId: 'u-1', messageId: 'dropped-test' });
  const byFilter = card.locator(`table.by-filter tr[data-filter-id="${drop!.id}"]`);
  const deadline = Date.now() + 30_000;
  while ((await byFilter.count()) === 0) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the drop in the overview');
    await page.waitForTimeout(500);
    await page.reload();
    await card.locator('table.funnel').waitFor();
  }
  expect(await byFilter.textContent()).toBe('Drop test events1');
  expect(await card.locator('tr[data-step="filters"] td.count').textContent()).toBe('1');
  await system.store.destinationFilters.delete(destination.id, drop!.id);
  await page.reload();

  await row.getByRole('button', { name: 'Delete' }).click();
  await card.locator('div.filters', { hasText: 'No filter' }).waitFor();
  expect(await system.store.destinationFilters.list(destination.id)).toEqual([]);
  expect(run.pageErrors).toEqual([]);
});
