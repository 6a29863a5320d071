import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Kysely } from 'kysely';
import { makeReplayActivities, type ReplayPageResult } from '../../src/activities/replay-archive';
import { LiveLag } from '../../src/activities/live-lag';
import { deliveryPolicy, loadConfig } from '../../src/config';
import type { ReplayPlan } from '../../src/delivery/replay';
import type { DeliveryInput } from '../../src/delivery/types';
import type { AcceptedCall } from '../../src/messages/accept-calls';
import { callArchiver } from '../../src/messages/archive-calls';
import type { ReplayDeliveries } from '../../src/ports';
import { openBody } from '../../src/privacy/sealed-body';
import { erasedSubjects } from '../../src/privacy/subjects';
import type { Store } from '../../src/store';
import type { Tables } from '../../src/store/tables';
import { testKeyring } from './payload-keys';

/**
 * A replay page's decisions and its store reads, shared by the SQLite and PostgreSQL
 * runs (test/integration/replay-page.test.ts): the batch reads the page makes (erased ids,
 * suppressions, data keys, the destination's rules) and the store methods behind them.
 */

/** Store method calls per table family, counted at the Store interface the activity is given. */
function countingStore(store: Store): { store: Store; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const counted = <T extends object>(family: string, target: T): T =>
    new Proxy(target, {
      get(object, name, receiver) {
        const value = Reflect.get(object, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls[family] = (calls[family] ?? 0) + 1;
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  return {
    calls,
    store: { ...store, erasures: counted('erasures', store.erasures), suppressions: counted('suppressions', store.suppressions), dataKeys: counted('dataKeys', store.dataKeys), destinationFilters: counted('destinationFilters', store.destinationFilters) },
  };
}

/** The port to Temporal, recording what the activity hands it (the end-to-end path: archive-replay.test.ts). */
function recordingDeliveries(): ReplayDeliveries & { started: DeliveryInput[]; recovered: DeliveryInput[] } {
  const started: DeliveryInput[] = [];
  const recovered: DeliveryInput[] = [];
  return {
    started,
    recovered,
    start: async (input) => {
      started.push(input);
      return true;
    },
    recover: async (input) => {
      recovered.push(input);
      return true;
    },
    outcome: async () => 'running',
  };
}

export function describeReplayPage(open: () => Promise<{ store: Store; raw: () => Kysely<Tables> }>): void {
  const keyring = testKeyring();
  const policy = deliveryPolicy(loadConfig({}));
  let store: Store;
  let raw: () => Kysely<Tables>;
  beforeAll(async () => {
    ({ store, raw } = await open());
  });
  afterAll(async () => {
    await store?.close();
  });

  let n = 0;
  const acceptedAt = (ms: number) => new Date(ms).toISOString();

  /** A source and its destination that drops `Dropped` events, with `calls` archived a minute ago. */
  async function archived(calls: Array<{ userId?: string; anonymousId?: string; event: string; integrations?: Record<string, unknown> }>) {
    const { source } = await store.sources.create(`replay page ${++n}`);
    const destination = await store.destinations.create(source.id, { enabled: true, webhooks: [{ url: 'https://receiver.example/hook', headers: {} }] });
    await store.destinationFilters.create(destination.id, { title: 'Drop Dropped', enabled: true, if: "event = 'Dropped'", actions: [{ type: 'DROP' }] }, 10);
    const at = acceptedAt(Date.now() - 60_000);
    const accepted = calls.map(
      (call, i): AcceptedCall => ({
        message: { type: 'track', messageId: `m-${n}-${i}`, ...(call.userId && { userId: call.userId }), ...(call.anonymousId && { anonymousId: call.anonymousId }), event: call.event, timestamp: at, receivedAt: at, context: {}, properties: { i } },
        ...(call.integrations && { integrations: call.integrations }),
      }),
    );
    await callArchiver(store, keyring)(source.id, accepted, store.dataKeys);
    const plan: ReplayPlan = {
      id: `rpl_page${n}`,
      sourceId: source.id,
      destinationId: destination.id,
      since: acceptedAt(Date.now() - 120_000),
      until: acceptedAt(Date.now() + 60_000),
      dryRun: false,
      maxInFlight: 5,
    };
    return { source, destination, plan, ids: accepted.map((call) => call.message.messageId) };
  }

  async function runPage(target: Store, deliveries: ReplayDeliveries, plan: ReplayPlan, size: number, logger?: DefaultLogger): Promise<ReplayPageResult> {
    const activities = makeReplayActivities(target, policy, keyring, deliveries, 7 * 86_400_000, { liveLag: new LiveLag(), limitMs: 'auto' });
    return new MockActivityEnvironment(undefined, logger && { logger }).run((input: Parameters<typeof activities.replayPage>[0]) => activities.replayPage(input), { replay: plan, size });
  }

  /** Ten users of each kind, interleaved on one page: plain, erased (key destroyed), erased (record only), suppressed, lifted after acceptance, filtered, and anonymous suppressed. */
  async function mixedPage() {
    const kinds = ['plain', 'shredded', 'erasedRecord', 'suppressed', 'liftedLater', 'filtered', 'anonSuppressed'] as const;
    const calls = Array.from({ length: 70 }, (_, i) => {
      const kind = kinds[i % kinds.length];
      const id = `${kind}-${n + 1}-${i}`;
      return { kind, call: kind === 'anonSuppressed' ? { anonymousId: id, event: 'Kept' } : { userId: id, event: kind === 'filtered' ? 'Dropped' : 'Kept' } };
    });
    const page = await archived(calls.map((c) => c.call));
    const idsOf = (kind: (typeof kinds)[number]) => calls.filter((c) => c.kind === kind).map((c) => c.call.userId ?? c.call.anonymousId);
    const now = new Date().toISOString();
    // A DELETE regulation: the record and the keys (erasure.ts, regulations); here each apart too.
    await store.erasures.add([...idsOf('shredded'), ...idsOf('erasedRecord')], now);
    await store.dataKeys.destroy(idsOf('shredded').flatMap((id) => erasedSubjects(keyring, [id])));
    await store.suppressions.add([...idsOf('suppressed'), ...idsOf('liftedLater'), ...idsOf('anonSuppressed')], now);
    // Lifted after the messages were accepted: UNSUPPRESS frees new calls only.
    await store.suppressions.lift(idsOf('liftedLater'), now);
    const plain = page.ids.filter((_, i) => calls[i].kind === 'plain');
    return { ...page, plain };
  }

  it('a page mixing erased, suppressed, filtered and plain users starts exactly the plain ones and counts each skip', async () => {
    const { plan, plain, destination } = await mixedPage();
    const deliveries = recordingDeliveries();
    const result = await runPage(store, deliveries, plan, 100);
    expect(result.counts).toEqual({ matched: 70, started: 10, delivered: 0, failed: 0, skipped: { erased: 20, suppressed: 30, filtered: 10, blocked: 0, duplicate: 0 } });
    expect(result.inFlight.sort()).toEqual([...plain].sort());
    expect(result.next).toBeUndefined();
    expect(deliveries.started.map((input) => input.messageId).sort()).toEqual([...plain].sort());
    for (const input of deliveries.started) {
      expect(input.replay).toEqual({ id: plan.id });
      expect(input.destinationIds).toEqual([destination.id]);
      // Sealed again for the delivery (crypto-shredding reaches it): nothing in the clear.
      expect(input.sealedMessage).toBeDefined();
      expect(input.message).toBeUndefined();
    }
  });

  it('a dry run decides the same page alike and starts nothing', async () => {
    const { plan } = await mixedPage();
    const deliveries = recordingDeliveries();
    const result = await runPage(store, deliveries, { ...plan, dryRun: true }, 100);
    expect(result.counts).toEqual({ matched: 70, started: 0, delivered: 0, failed: 0, skipped: { erased: 20, suppressed: 30, filtered: 10, blocked: 0, duplicate: 0 } });
    expect(deliveries.started).toEqual([]);
  });

  /** A source whose plan (connected now) blocks an Order Completed without order_id, and omits unplanned properties. */
  async function withPlan(sourceId: string) {
    const plan = await store.trackingPlans.create({ name: `replay page plan ${n}`, type: 'LIVE' });
    const jsonSchema = { type: 'object', properties: { properties: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } } };
    await store.trackingPlans.replaceRules(plan.id, [{ type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema }]);
    expect(await store.trackingPlans.connect(plan.id, sourceId)).toBe('connected');
    await store.trackingPlans.setControls(sourceId, JSON.stringify({ track: { allowEventOnViolations: false, allowUnplannedEventProperties: false } }));
  }

  it("decides each message by the source's plan as it is today: a blocked one counted, an unplanned property left out", async () => {
    const page = await archived([{ userId: 'plan-a', event: 'Order Completed' }]);
    await withPlan(page.source.id);
    // The plan blocks the archived one (no order_id); one more, archived now, passes with `i` omitted.
    const at = acceptedAt(Date.now() - 30_000);
    const passing: AcceptedCall = { message: { type: 'track', messageId: `m-${n}-ok`, userId: 'plan-b', event: 'Order Completed', timestamp: at, receivedAt: at, context: {}, properties: { order_id: 'o-1', i: 1 } } };
    await callArchiver(store, undefined)(page.source.id, [passing], store.dataKeys);
    const deliveries = recordingDeliveries();
    const result = await runPage(store, deliveries, { ...page.plan, dryRun: false }, 10);
    expect(result.counts).toEqual({ matched: 2, started: 1, delivered: 0, failed: 0, skipped: { erased: 0, suppressed: 0, filtered: 0, blocked: 1, duplicate: 0 } });
    expect(deliveries.started.map((input) => input.messageId)).toEqual([`m-${n}-ok`]);
    // Sealed for the delivery under the user's key, with the body the plan left: `i` omitted, and named.
    const [{ sealedMessage }] = deliveries.started;
    expect(sealedMessage).toBeDefined();
    const key = (await store.dataKeys.getMany([sealedMessage!.subject])).get(sealedMessage!.subject)!;
    const sent = openBody(key, `m-${n}-ok`, sealedMessage!);
    expect(sent.properties).toEqual({ order_id: 'o-1' });
    expect(sent.context).toEqual({ protocols: { omitted: ['properties.i'] } });
  });

  it('a blocked-only page reads only what the plan blocked at ingest and recovers it to every enabled destination', async () => {
    const page = await archived([{ userId: 'rec-a', event: 'Order Completed' }]);
    const other = await store.destinations.create(page.source.id, { enabled: true, webhooks: [{ url: 'https://other.example/hook', headers: {} }] });
    const at = acceptedAt(Date.now() - 30_000);
    // Blocked at ingest (its verdict archived with it) and passing today: no plan is connected any more.
    const blocked = { message: { type: 'track' as const, messageId: `m-${n}-blocked`, userId: 'rec-b', event: 'Order Completed', timestamp: at, receivedAt: at, context: {}, properties: {} }, plan: { status: 'blocked' as const, violations: [] } };
    await callArchiver(store, keyring)(page.source.id, [blocked], store.dataKeys);
    const deliveries = recordingDeliveries();
    const { destinationId: _one, ...everyDestination } = page.plan;
    const result = await runPage(store, deliveries, { ...everyDestination, blockedOnly: true }, 10);
    expect(result.counts).toEqual({ matched: 1, started: 1, delivered: 0, failed: 0, skipped: { erased: 0, suppressed: 0, filtered: 0, blocked: 0, duplicate: 0 } });
    expect(deliveries.recovered.map((input) => [input.messageId, [...input.destinationIds].sort(), input.replay])).toEqual([[`m-${n}-blocked`, [page.destination.id, other.id].sort(), { id: page.plan.id }]]);
    expect(deliveries.started).toEqual([]);
  });

  it("reads erased ids, suppressions, data keys and the destination's rules once per page, not once per message", async () => {
    const { plan } = await mixedPage();
    const counting = countingStore(store);
    const first = await runPage(counting.store, recordingDeliveries(), plan, 35);
    expect(first.next).toBeDefined();
    // One erased-ids read, one suppressions read, one rules read; data keys: one to open the page, one to seal what goes.
    expect(counting.calls).toEqual({ erasures: 1, suppressions: 1, destinationFilters: 1, dataKeys: 2 });
  });

  it('logs a saved filter that no longer compiles, naming the filter only, and sends the page unfiltered by it', async () => {
    const { plan, destination, ids } = await archived([{ userId: 'secret-user@example.com', event: 'Kept' }]);
    const [filter] = await store.destinationFilters.list(destination.id);
    // As a later version's grammar could have saved it: the store holds what this one cannot parse.
    await raw().updateTable('destination_filters').set({ condition: "event = 'unterminated" }).where('id', '=', filter.id).execute();
    const entries: LogEntry[] = [];
    const logger = new DefaultLogger('WARN', (entry) => entries.push(entry));
    const deliveries = recordingDeliveries();
    const result = await runPage(store, deliveries, plan, 10, logger);
    expect(result.counts.started).toBe(1);
    expect(deliveries.started.map((input) => input.messageId)).toEqual(ids);
    const warned = entries.filter((entry) => entry.level === 'WARN' && entry.meta?.filterId === filter.id);
    expect(warned).toHaveLength(1);
    expect(warned[0].message).toMatch(/filter does not compile/);
    // Never a payload or a user id.
    expect(JSON.stringify(entries.map(({ message, meta }) => ({ message, meta })))).not.toContain('secret-user');
  });
}

/** The store's batch reads a replay page makes, against the one-id reads they stand in for. */
export function describeReplayPageReads(open: () => Promise<Store>): void {
  let store: Store;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(async () => {
    await store?.close();
  });
  const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}`;

  it('erasedAtOf: per erased id its latest erasure, as erasedAt reads it one id at a time; ids never erased absent', async () => {
    const [a, b, never] = [unique('a'), unique('b'), unique('never')];
    await store.erasures.add([a, b], '2026-11-20T10:00:00.000Z');
    await store.erasures.add([a], '2026-11-21T10:00:00.000Z');
    const found = await store.erasures.erasedAtOf([a, b, never, a]);
    expect(Object.fromEntries(found)).toEqual({ [a]: '2026-11-21T10:00:00.000Z', [b]: '2026-11-20T10:00:00.000Z' });
    for (const id of [a, b, never]) expect(found.get(id)).toBe(await store.erasures.erasedAt([id]));
    expect((await store.erasures.erasedAtOf([])).size).toBe(0);
  });

  it('suppressions.ofEach: per suppressed id its suppressions, lifted ones included, as `of` reads them; others absent', async () => {
    const [held, lifted, never] = [unique('held'), unique('lifted'), unique('never')];
    await store.suppressions.add([held, lifted], '2026-11-20T10:00:00.000Z');
    await store.suppressions.lift([lifted], '2026-11-21T10:00:00.000Z');
    const found = await store.suppressions.ofEach([held, lifted, never]);
    expect(Object.fromEntries(found)).toEqual({ [held]: [{ suppressedAt: '2026-11-20T10:00:00.000Z' }], [lifted]: [{ suppressedAt: '2026-11-20T10:00:00.000Z', liftedAt: '2026-11-21T10:00:00.000Z' }] });
    for (const id of [held, lifted]) expect(found.get(id)).toEqual(await store.suppressions.of([id]));
    expect((await store.suppressions.ofEach([])).size).toBe(0);
  });

  it('dataKeys.getMany: the keys that exist, as `get` reads them, and makes none for a subject without one', async () => {
    const [kept, destroyed, never] = [unique('kept'), unique('destroyed'), unique('never')];
    const made = await store.dataKeys.getOrCreate([kept, destroyed]);
    await store.dataKeys.destroy([destroyed]);
    const found = await store.dataKeys.getMany([kept, destroyed, never]);
    expect([...found.keys()]).toEqual([kept]);
    expect(found.get(kept)!.equals(made.get(kept)!)).toBe(true);
    expect(await store.dataKeys.get(never)).toBeUndefined();
  });
}
