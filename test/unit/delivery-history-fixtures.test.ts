import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deliveryAttempts } from '../../src/temporal/delivery-history';
import { historyItems, startedInput } from '../../src/temporal/history-events';
import { historyFromJSON } from '../helpers/histories';
import { testLoadedDataConverter } from '../helpers/data-converter';

/**
 * The recorded histories of replay.test.ts (real runs: local-activity markers, deferred and lost
 * attempts, failover, retry rounds) read the way GET /admin/sources/:sourceId/deliveries/:messageId
 * reads a live one (through the codec, with the committed test key): each attempt as
 * [webhookIndex, round, outcome, httpStatus or error].
 */
async function recorded(name: string) {
  const history = historyFromJSON(JSON.parse(readFileSync(path.join(__dirname, '../fixtures/histories', `${name}.json`), 'utf8')));
  const converter = testLoadedDataConverter();
  const input = (await startedInput(history, converter))!;
  const [destination, ...others] = deliveryAttempts(input, await historyItems(history, converter));
  expect(others).toEqual([]);
  expect(destination.destinationId).toBe(input.destinationIds[0]);
  for (const attempt of destination.attempts) expect(Date.parse(attempt.startedAt!)).not.toBeNaN();
  return { status: destination.status, attempts: destination.attempts.map((a) => [a.webhookIndex, a.round, a.outcome, a.httpStatus ?? a.error]) };
}

it.each([
  ['deliver-first-try-local-activity', 'delivered', [[0, 1, 'success', 200]]],
  ['deliver-first-try-local-deferred', 'delivered', [[0, 1, 'success', 200]]],
  ['deliver-failover-second-url', 'delivered', [[0, 1, 'retry', 503], [1, 1, 'success', 200]]],
  ['deliver-retry-rounds', 'delivered', [[0, 1, 'retry', 503], [0, 2, 'retry', 500], [0, 3, 'success', 200]]],
  ['deliver-lost-first-attempt-keeps-failover', 'delivered', [[0, 1, 'retry', 'attempt lost: activity StartToClose timeout'], [1, 1, 'success', 200]]],
  ['deliver-destination-switched-off', 'stopped', [[0, 1, 'retry', 503], [0, 2, 'retry', 503]]],
  ['deliver-busy-waits-its-turn', 'delivered', [[0, 1, 'success', 200]]],
])('%s: %s after %j', async (name, status, attempts) => {
  expect(await recorded(name)).toEqual({ status, attempts });
});
