import type { Page } from 'playwright-core';
import { openDestination, usePortal, waitFor } from '../helpers/portal';
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
