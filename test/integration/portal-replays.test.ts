import { openDestination, screenshot, usePortal, waitFor } from '../helpers/portal';
import { basicAuth } from '../helpers/system';

/**
 * Replays in the operators' portal, in a real headless Chromium on the real API,
 * Temporal, worker and receiver: from a destination made after the messages, a dry run first
 * (the Replay button stays off until then), then the replay, its progress to completed, and a
 * second replay paused and cancelled from its row.
 */

const run = usePortal();

it('starts a replay from a destination after a dry run, shows its progress, and pauses and cancels one', async () => {
  const { system, receiver, page, origin } = run;
  const { source, writeKey } = await system.store.sources.create('Portal replays');
  const ids = Array.from({ length: 6 }, (_, i) => `portal-replay-${i}`);
  const batch = ids.map((messageId) => ({ type: 'track', messageId, userId: 'portal-u', event: 'Signed Up' }));
  expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
  // The destination comes after the messages: a backfill.
  const destination = await system.store.destinations.create(source.id, { name: 'Warehouse', enabled: true, webhooks: [{ url: receiver.url, headers: {} }] });

  await openDestination(page, origin, destination.id, ['replays']);
  const card = page.locator(`section[data-destination-id="${destination.id}"]`);
  const form = card.getByRole('form', { name: 'Replay' });
  await form.waitFor();
  const replayButton = form.getByRole('button', { name: 'Replay', exact: true });
  expect(await replayButton.isDisabled()).toBe(true);

  await form.getByRole('button', { name: 'Dry run' }).click();
  await card.locator('.dry-run-result', { hasText: '6 would be sent' }).waitFor({ timeout: 60_000 });
  expect(receiver.requests.filter((r) => r.headers['x-switchyard-replay'])).toHaveLength(0);
  expect(await replayButton.isDisabled()).toBe(false);
  // The dry run's row says it is one.
  const dryRun = (await system.store.replays.list(10)).find((r) => r.destinationId === destination.id && r.dryRun)!;
  await card.locator(`tr[data-replay-id="${dryRun.id}"] .dry-run`, { hasText: 'dry run' }).waitFor();

  await replayButton.click();
  await waitFor(async () => receiver.requests.filter((r) => r.headers['x-switchyard-replay']).length === ids.length, 'the replay to arrive');
  const replays = (await system.store.replays.list(10)).filter((r) => r.destinationId === destination.id);
  const real = replays.find((r) => !r.dryRun)!;
  const row = card.locator(`tr[data-replay-id="${real.id}"]`);
  await row.locator('.replay-status', { hasText: 'completed' }).waitFor({ timeout: 60_000 });
  expect(await row.locator('.replay-progress').textContent()).toContain('delivered 6');
  expect(await row.locator('.dry-run').count()).toBe(0);
  await screenshot(page, 'destination-replays');

  // A slow receiver keeps the next replay running long enough to pause it, then cancel it.
  receiver.respond(() => ({ status: 200, delayMs: 1_500 }));
  await form.getByLabel('Trigger (FQL, optional)').fill("event = 'Signed Up'");
  expect(await replayButton.isDisabled()).toBe(true);
  await form.getByRole('button', { name: 'Dry run' }).click();
  await card.locator('.dry-run-result', { hasText: '6 would be sent' }).waitFor({ timeout: 60_000 });
  await replayButton.click();
  const second = await (async () => {
    for (;;) {
      const found = (await system.store.replays.list(10)).find((r) => r.destinationId === destination.id && !r.dryRun && r.id !== real.id);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const secondRow = card.locator(`tr[data-replay-id="${second.id}"]`);
  await secondRow.getByRole('button', { name: 'Pause' }).click();
  await secondRow.locator('.replay-status', { hasText: 'paused' }).waitFor({ timeout: 30_000 });
  expect((await system.store.replays.get(second.id))!.status).toBe('paused');
  await secondRow.getByRole('button', { name: 'Cancel' }).click();
  await secondRow.locator('.replay-status', { hasText: 'cancelled' }).waitFor({ timeout: 30_000 });
  expect((await system.store.replays.get(second.id))!.status).toBe('cancelled');
  receiver.respond(() => ({ status: 200 }));
}, 240_000);
