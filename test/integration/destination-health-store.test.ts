import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HealthRecorder } from '../../src/activities/health-recorder';
import { DAY_MINUTES, emptyHistogram, latencyBucket, MINUTE_MS, minuteOf } from '../../src/delivery/webhook-health';
import { openStore, type Store } from '../../src/store';
import { createTestDatabase } from '../helpers/postgres';

/**
 * Webhook health in the store, on both dialects: several workers' recorders flush into the same
 * minute rows, and the upsert adds their counts up instead of overwriting them.
 */

interface Dialect {
  open(): Promise<Store>;
  /** PostgreSQL takes concurrent flushes; two SQLite handles in one process must take turns (better-sqlite3 is synchronous). */
  concurrent: boolean;
  close(): void;
}

const dialects: [string, () => Promise<Dialect>][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-health-'));
      return { open: () => openStore({ databasePath: path.join(dir, 'switchyard.db') }), concurrent: false, close: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const url = await createTestDatabase('switchyard_health');
      return { open: () => openStore({ databasePath: '', databaseUrl: url }), concurrent: true, close: () => undefined };
    },
  ],
];

describe.each(dialects)('webhook health on %s', (_name, makeDialect) => {
  let dialect: Dialect;
  let stores: Store[];
  beforeAll(async () => {
    dialect = await makeDialect();
    // Two processes' handles on one database: two workers.
    stores = [await dialect.open(), await dialect.open()];
  });
  afterAll(async () => {
    for (const store of stores ?? []) await store.close();
    dialect?.close();
  });

  const now = Date.UTC(2026, 10, 24, 12, 30, 10);
  const flushBoth = async (recorders: HealthRecorder[]) => {
    if (dialect.concurrent) await Promise.all(recorders.map((r) => r.flush()));
    else for (const r of recorders) await r.flush();
  };

  it("adds two workers' flushes up: counts by class, the latency histogram, the later error; a second flush adds again", async () => {
    const [a, b] = stores.map((store) => new HealthRecorder(store, 3_600_000, undefined, () => now));
    try {
      a.record('dst_1', 'https://a.example/hook', now, { kind: 'success', status: 200 }, 40);
      a.record('dst_1', 'https://a.example/hook', now + 1_000, { kind: 'retry', status: 503, reason: 'HTTP 503' }, 900);
      b.record('dst_1', 'https://a.example/hook', now + 2_000, { kind: 'success', status: 204 }, 40);
      b.record('dst_1', 'https://a.example/hook', now + 3_000, { kind: 'permanent', status: 404, reason: 'HTTP 404' }, 3);
      b.record('dst_1', 'https://b.example/hook', now, { kind: 'success', status: 200 }, 1);
      await flushBoth([a, b]);

      a.record('dst_1', 'https://a.example/hook', now + 4_000, { kind: 'retry', reason: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' }, 1);
      await flushBoth([a, b]);

      const buckets = await stores[0].webhookHealth.read('dst_1', minuteOf(now) - 10);
      const first = buckets.find((bucket) => bucket.url === 'https://a.example/hook')!;
      const latency = emptyHistogram();
      for (const ms of [40, 900, 40, 3, 1]) latency[latencyBucket(ms)]++;
      expect(first).toEqual({
        destinationId: 'dst_1',
        url: 'https://a.example/hook',
        minute: minuteOf(now),
        successes: 2,
        retryFailures: 2,
        permanentFailures: 1,
        latency,
        lastError: { reason: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', atMs: now + 4_000 },
      });
      expect(buckets.find((bucket) => bucket.url === 'https://b.example/hook')).toMatchObject({ successes: 1, retryFailures: 0, permanentFailures: 0 });
      expect(buckets).toHaveLength(2);
      expect(await stores[1].webhookHealth.read('dst_other', 0)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps the later error when the earlier one is flushed last', async () => {
    const [a, b] = stores.map((store) => new HealthRecorder(store, 3_600_000, undefined, () => now));
    try {
      b.record('dst_2', 'u', now + 5_000, { kind: 'permanent', status: 400, reason: 'later' }, 1);
      await b.flush();
      a.record('dst_2', 'u', now + 1_000, { kind: 'retry', status: 500, reason: 'earlier' }, 1);
      await a.flush();
      const [bucket] = await stores[0].webhookHealth.read('dst_2', 0);
      expect(bucket.lastError).toEqual({ reason: 'later', atMs: now + 5_000 });
      expect(bucket.retryFailures + bucket.permanentFailures).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('deletes buckets older than two days on its first flush, keeps younger ones', async () => {
    const nowMinute = minuteOf(now);
    const old = (minute: number) => ({ destinationId: 'dst_3', url: 'u', minute, successes: 1, retryFailures: 0, permanentFailures: 0, latency: emptyHistogram() });
    await stores[0].webhookHealth.add([old(nowMinute - 2 * DAY_MINUTES - 1), old(nowMinute - 2 * DAY_MINUTES)]);
    const recorder = new HealthRecorder(stores[1], 3_600_000, undefined, () => now);
    await recorder.close();
    expect((await stores[0].webhookHealth.read('dst_3', 0)).map((bucket) => nowMinute - bucket.minute)).toEqual([2 * DAY_MINUTES]);
  });

  it('keeps the buckets of a flush that failed and adds them with the next one', async () => {
    let failNext = true;
    const flaky: Pick<Store, 'webhookHealth'> = {
      webhookHealth: {
        ...stores[0].webhookHealth,
        add: async (buckets, options) => {
          if (failNext) {
            failNext = false;
            throw new Error('database away');
          }
          return stores[0].webhookHealth.add(buckets, options);
        },
      },
    };
    const warnings: unknown[] = [];
    const recorder = new HealthRecorder(flaky, 3_600_000, { warn: (...args: unknown[]) => void warnings.push(args) }, () => now);
    recorder.record('dst_5', 'u', now, { kind: 'success', status: 200 }, 1);
    await recorder.flush();
    expect(await stores[0].webhookHealth.read('dst_5', 0)).toEqual([]);
    expect(warnings).toHaveLength(1);
    recorder.record('dst_5', 'u', now, { kind: 'retry', status: 502, reason: 'HTTP 502' }, 1);
    await recorder.close();
    expect(await stores[0].webhookHealth.read('dst_5', 0)).toMatchObject([{ successes: 1, retryFailures: 1 }]);
  });

  it('flushes on its own every interval, and what close() finds last', async () => {
    const recorder = new HealthRecorder(stores[0], 100, undefined, () => now);
    recorder.record('dst_4', 'u', now, { kind: 'success', status: 200 }, 1);
    const until = Date.now() + 5_000;
    while ((await stores[1].webhookHealth.read('dst_4', 0)).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await stores[1].webhookHealth.read('dst_4', 0)).toMatchObject([{ successes: 1 }]);
    recorder.record('dst_4', 'u', now + MINUTE_MS, { kind: 'success', status: 200 }, 1);
    await recorder.close();
    expect((await stores[1].webhookHealth.read('dst_4', 0)).length).toBe(2);
  });
});
