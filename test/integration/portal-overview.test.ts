import type { Page } from 'playwright-core';
import { logIn, openDestination, screenshot, usePortal, waitFor } from '../helpers/portal';
import { ADMIN_TOKEN, deliveryResult, send } from '../helpers/system';

/**
 * Consent and the delivery overview in the operators' portal, in a real headless Chromium on the real API, Temporal and
 * worker: a destination's card shows where the last 24 h of messages went, as a funnel whose every
 * step is a number in text, named with the overview API's words.
 */

const run = usePortal();
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The funnel's steps as the page shows them in text: step name → count. */
async function funnelText(card: ReturnType<Page['locator']>): Promise<Record<string, number>> {
  const rows = card.locator('table.funnel tr[data-step]');
  const steps: Record<string, number> = {};
  for (const row of await rows.all()) steps[(await row.locator('th').textContent())!] = Number(await row.locator('td.count').textContent());
  return steps;
}

it('shows received → filtered by reason (stopped at send time too) → delivered / retrying / failed for the last 24 h in the destination\'s overview panel', async () => {
  const { system, receiver, page, origin } = run;
  // A destination that needs the advertising category, with the receiver refusing one message for good.
  const { source, writeKey } = await system.store.sources.create('Portal overview');
  const created = await system.app.inject({
    method: 'POST',
    url: `/admin/sources/${source.id}/destinations`,
    headers: auth,
    payload: { name: 'Ads hook', enabled: true, webhooks: [{ url: receiver.url }], consent: { categories: ['advertising'], whenAbsent: 'deliver' } },
  });
  expect(created.statusCode).toBe(201);
  const destinationId = created.json().id as string;
  receiver.respond((request) => ({ status: request.body.includes('"refused-by-receiver"') ? 400 : 200 }));

  // The scripted mix through the real ingestion API: 3 delivered, 1 failed, 3 refused consent, 1 left out by integrations.
  const granted = { consent: { categoryPreferences: { advertising: true } } };
  const refused = { consent: { categoryPreferences: { advertising: false } } };
  const sent = [
    ...['granted-1', 'granted-2', 'no-preferences'].map((messageId) => ({ messageId, context: messageId === 'no-preferences' ? {} : granted })),
    { messageId: 'refused-by-receiver', context: granted },
    ...['refused-1', 'refused-2', 'refused-3'].map((messageId) => ({ messageId, context: refused })),
    { messageId: 'integrations-off', context: granted, integrations: { Webhooks: false } },
  ];
  for (const body of sent) await send(system.app, writeKey, 'track', { userId: 'overview-user', event: 'Ad Clicked', ...body });
  for (const messageId of ['granted-1', 'granted-2', 'no-preferences', 'refused-by-receiver']) await deliveryResult(system.client, source.id, messageId);

  await openDestination(page, origin, destinationId, ['overview']);
  const card = page.locator(`section[data-destination-id="${destinationId}"]`);
  const expected = { received: 8, filtered: 4, integrations: 1, consent: 3, suppressed: 0, filters: 0, sampled: 0, stopped: 0, delivered: 3, retrying: 0, failed: 1 };
  let shown: Record<string, number> = {};
  await waitFor(async () => {
    await page.reload();
    await card.locator('table.funnel').waitFor();
    shown = await funnelText(card);
    return JSON.stringify(shown) === JSON.stringify(expected);
  }, `the funnel to show ${JSON.stringify(expected)} (last shown ${JSON.stringify(shown)})`);

  // Text a screen reader reads in order, each reason under the API's word; the bars are decoration.
  expect(await card.locator('table.funnel caption').textContent()).toBe('Last 24 h: where the messages went');
  expect(await card.locator('table.funnel td.bar-cell[aria-hidden="true"]').count()).toBe(11);
  expect(await card.locator('tr[data-step="consent"]').getAttribute('title')).toContain('consent category');
  // No filter has dropped anything: no per-filter table.
  expect(await card.locator('table.by-filter').count()).toBe(0);
});

it('finds what happened to one user\'s events on the Deliveries page (delivered or stopped, with the reason, by destination name), shows a source\'s calls live, and keeps ids and event names to payloads:read', async () => {
  const { system, receiver, page, origin, pageErrors } = run;
  const { source, writeKey } = await system.store.sources.create('Portal what happened');
  const destination = async (name: string, extra: Record<string, unknown> = {}) => {
    const reply = await system.app.inject({ method: 'POST', url: `/admin/sources/${source.id}/destinations`, headers: auth, payload: { name, enabled: true, webhooks: [{ url: receiver.url }], ...extra } });
    expect(reply.statusCode).toBe(201);
  };
  await destination('CRM hook');
  await destination('Ads hook', { consent: { categories: ['advertising'], whenAbsent: 'deliver' } });
  receiver.respond(() => ({ status: 200 }));
  await send(system.app, writeKey, 'track', { userId: 'portal-find', messageId: 'find-refused', event: 'Checkout Started', context: { consent: { categoryPreferences: { advertising: false } } } });
  await send(system.app, writeKey, 'track', { userId: 'someone-else', messageId: 'find-other', event: 'Checkout Started' });
  await deliveryResult(system.client, source.id, 'find-refused');

  // As admin: search by user id; each row says event, destination by name, status and reason.
  await logIn(page, origin);
  await page.goto(`${origin}/portal/#/deliveries`);
  const search = page.getByRole('form', { name: 'Find what happened to an event' });
  await search.getByLabel('User id').fill('portal-find');
  await search.getByRole('button', { name: 'Find' }).click();
  const rows = page.locator('table.fates tbody tr[data-message-id]');
  const rowText = async () => (await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent?.trim()).join(' | ')))).sort();
  let shown: string[] = [];
  await waitFor(async () => {
    shown = await rowText();
    return JSON.stringify(shown) === JSON.stringify(['Checkout Started | portal-find | Ads hook | stopped | consent | find-refused', 'Checkout Started | portal-find | CRM hook | delivered |  | find-refused']);
  }, `the user's two rows (last shown ${JSON.stringify(shown)})`);
  await screenshot(page, 'deliveries-what-happened');

  // The source's live view: a call sent now shows up by itself.
  await page.goto(`${origin}/portal/#/deliveries/live/${source.id}`);
  await page.locator('table.live tr[data-message-id="find-other"]').waitFor();
  await send(system.app, writeKey, 'track', { userId: 'portal-live', messageId: 'find-live', event: 'Live Clicked', integrations: { All: false } });
  const live = page.locator('table.live tr[data-message-id="find-live"]');
  await live.waitFor();
  expect(await live.locator('td.outcomes').textContent()).toBe('Ads hook: stopped integrations CRM hook: stopped integrations ');
  expect(await live.locator('td').nth(2).textContent()).toBe('Live Clicked');
  await screenshot(page, 'live');

  // Read-only: the same rows, without the user or the event, and no way to ask by them.
  const reader = (await system.app.inject({ method: 'POST', url: '/admin/tokens', headers: auth, payload: { name: 'what happened reader', scopes: ['read'] } })).json<{ token: string }>().token;
  const readOnly = await (await run.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  readOnly.on('pageerror', (error) => pageErrors.push(error.message));
  await logIn(readOnly, origin, reader);
  await readOnly.goto(`${origin}/portal/#/deliveries`);
  await readOnly.locator('table.fates tr[data-message-id="find-refused"]').first().waitFor();
  expect(await readOnly.getByRole('form', { name: 'Find what happened to an event' }).getByLabel('User id').isDisabled()).toBe(true);
  expect(await readOnly.locator('#fates-withheld').textContent()).toContain('payloads:read');
  const readerText = await readOnly.locator('table.fates').textContent();
  expect(readerText).not.toContain('portal-find');
  expect(readerText).not.toContain('Checkout Started');
  expect(readerText).toContain('consent');
  await screenshot(readOnly, 'read-only-deliveries-what-happened');
  await readOnly.goto(`${origin}/portal/#/deliveries/live/${source.id}`);
  await readOnly.locator('table.live tr[data-message-id="find-live"]').waitFor();
  expect(await readOnly.locator('table.live').textContent()).not.toContain('Live Clicked');
  await screenshot(readOnly, 'read-only-live');
  expect(pageErrors).toEqual([]);
});
