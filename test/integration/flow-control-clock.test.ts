import path from 'node:path';
import { makeAdmission, type AdmissionClock } from '../../src/activities/admit-attempt';
import type { AttemptRequest } from '../../src/delivery/types';
import { openStore } from '../../src/store';
import type { Store } from '../../src/store/types';
import { createTestDatabase } from '../helpers/postgres';
import { ROOT } from '../helpers/processes';

/**
 * One clock for holds: two workers whose clocks are a minute apart share a destination's
 * rate limit and a URL's backpressure through the store. Every time the store keeps is its own, and
 * each answer is a wait from the store's now, so neither worker's skew reaches the other: the one
 * behind is not starved by slots and sends the one ahead wrote, and a pause lasts what the URL asked.
 */

const MINUTE = 60_000;
const request: AttemptRequest = { destinationId: '', webhookIndex: 0, messageId: 'm', message: { type: 'track' }, timeoutMs: 5_000, round: 1, flowControl: true, holdLeftMs: 10 * MINUTE };
/** A worker's clock `skewMs` off the real one; its sleeps are real. */
const skewed = (skewMs: number): AdmissionClock => ({ now: () => Date.now() + skewMs, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) });

const stores: Store[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
});

describe.each([
  ['SQLite', async () => openStore({ databasePath: path.join(process.env.SWITCHYARD_TEST_DIR ?? path.join(ROOT, '.test-data'), `flow-clock-${process.pid}.db`) })],
  ['PostgreSQL', async () => openStore({ databasePath: '', databaseUrl: await createTestDatabase('switchyard_flow_clock') })],
])('on %s', (_dialect, open) => {
  let store: Store;
  beforeAll(async () => {
    store = await open();
    stores.push(store);
  });

  it('lets a worker a minute behind take its turns under maxRequestsPerSecond beside one a minute ahead', async () => {
    const { source } = await store.sources.create('clock skew');
    const destination = await store.destinations.create(source.id, { enabled: true, maxRequestsPerSecond: 10, webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }] });
    const workers = [-MINUTE, MINUTE].map((skew) => ({ clock: skewed(skew), admit: makeAdmission(store, undefined, skewed(skew)) }));
    // Alternating asks, each worker holding the slot it was handed as the workflow would.
    for (let i = 0; i < 6; i++) {
      const { clock, admit } = workers[i % 2];
      const req = { ...request, destinationId: destination.id };
      let hold = await admit(req, destination, destination.webhooks[0], clock.now());
      if (hold) {
        // At 10/s a turn is 100 ms off, not the two minutes between the clocks.
        expect(hold.waitMs).toBeLessThanOrEqual(1_000);
        await clock.sleep(hold.waitMs ?? 0);
        hold = await admit({ ...req, ...(hold.reservedSlotMs !== undefined && { reservedSlotMs: hold.reservedSlotMs }) }, destination, destination.webhooks[0], clock.now());
        if (hold) expect(hold.waitMs).toBeLessThanOrEqual(1_000);
      }
    }
  });

  it('holds a URL that asked for 5 s of backpressure 5 s, whichever worker recorded it and whichever asks', async () => {
    const { source } = await store.sources.create('clock skew backpressure');
    const created = await store.destinations.create(source.id, { enabled: true, webhooks: [{ url: 'https://hooks.example.com/b', headers: {} }] });
    await store.flowControl.backpressure(created.id, created.webhooks[0].url, 5_000, 'HTTP 429 with Retry-After');
    const destination = (await store.destinations.get(created.id))!;
    for (const skew of [-MINUTE, MINUTE]) {
      const clock = skewed(skew);
      const hold = await makeAdmission(store, undefined, clock)({ ...request, destinationId: destination.id }, destination, destination.webhooks[0], clock.now());
      expect(hold).toMatchObject({ reason: 'backpressure' });
      expect(hold!.waitMs).toBeGreaterThan(4_000);
      expect(hold!.waitMs).toBeLessThanOrEqual(5_000);
    }
  });
});
