import { Migrator, sql, type Kysely } from 'kysely';
import { rateIntervalUs } from '../../src/delivery/flow-control';
import { migrationProvider } from '../../src/store/migrations';
import type { Store } from '../../src/store/types';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { createTestDatabase } from '../helpers/postgres';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * Sub-millisecond rate slots (migration 0022_rate_slots_us), on a SQLite file and a real
 * PostgreSQL database: a limit of N requests/s hands out slots 1/N s apart for any N up to 10,000,
 * where whole-millisecond slots made every limit above 1,000/s act as 1,000/s. Asserted on the
 * slot values the store hands out, never on how fast the machine is.
 */

const hook = { url: 'https://hooks.example.com/slots', headers: {} };
const HOUR_US = 3_600_000_000;

describe.each([
  ['SQLite', () => sqliteStoreFile('rate-slots')],
  ['PostgreSQL', async () => postgresStoreDatabase(await createTestDatabase('switchyard_rate_slots'))],
] as const)('rate slots on %s', (_name, makeDatabase) => {
  let database: Awaited<ReturnType<typeof makeDatabase>>;
  let store: Store;
  beforeAll(async () => {
    database = await makeDatabase();
    store = await database.open();
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
  });

  const limited = async (maxRequestsPerSecond: number) => {
    const { source } = await store.sources.create(`limited ${maxRequestsPerSecond}/s`);
    return store.destinations.create(source.id, { enabled: true, maxRequestsPerSecond, webhooks: [hook] });
  };
  /**
   * A queue a second long already, as a burst that outruns the limit leaves it: every ask that
   * follows finds the next slot ahead of now however slowly this machine asks, so the slots handed
   * out are the limiter's spacing alone. Returns the next free slot.
   */
  const queueASecondLong = async (destinationId: string, intervalUs: number) => {
    await store.flowControl.reserveSlot(destinationId, intervalUs, HOUR_US);
    const raw = database.raw();
    await raw.updateTable('destination_rates').set({ next_slot_us: sql<number>`next_slot_us + 1000000` }).where('destination_id', '=', destinationId).execute();
    return Number((await raw.selectFrom('destination_rates').select('next_slot_us').where('destination_id', '=', destinationId).executeTakeFirstOrThrow()).next_slot_us);
  };

  it('spaces 50 reservations in a burst under 5,000/s 200 µs apart, not 1 ms', async () => {
    const d = await limited(5_000);
    const next = await queueASecondLong(d.id, rateIntervalUs(5_000));
    const slots = await Promise.all(Array.from({ length: 50 }, () => store.flowControl.reserveSlot(d.id, rateIntervalUs(5_000), HOUR_US)));
    expect(slots.every((s) => s.reserved)).toBe(true);
    expect(slots.map((s) => s.slotUs).sort((a, b) => a - b)).toEqual(slots.map((_s, i) => next + i * 200));
    // Each wait is its slot's distance from the store's now: under the second the queue was long.
    for (const s of slots) expect(s.waitUs).toBeLessThanOrEqual(1_000_000 + 49 * 200);
  });

  it('under 10,000/s hands 100 sends 10 ms of slots, not 100 ms', async () => {
    const d = await limited(10_000);
    const next = await queueASecondLong(d.id, rateIntervalUs(10_000));
    const slots = await Promise.all(Array.from({ length: 100 }, () => store.flowControl.reserveSlot(d.id, rateIntervalUs(10_000), HOUR_US)));
    const taken = slots.map((s) => s.slotUs).sort((a, b) => a - b);
    expect(taken[0]).toBe(next);
    expect(taken.at(-1)! - taken[0]).toBe(99 * 100);
  });

  it('claims sends asked together under 10,000/s at send time at least 100 µs apart, none told to ask again', async () => {
    const d = await limited(10_000);
    // Ten claimed together fit within one timer tick (SEND_AHEAD_US): each is claimed at once, an
    // interval after the one before or later (when this machine asks more slowly than 10,000/s).
    const claims = await Promise.all(Array.from({ length: 10 }, () => store.flowControl.claimSend(d.id, rateIntervalUs(10_000))));
    expect(claims.every((c) => c.claimed)).toBe(true);
    const sends = claims.map((c) => c.sendAtUs).sort((a, b) => a - b);
    sends.slice(1).forEach((at, i) => expect(at - sends[i]).toBeGreaterThanOrEqual(100));
    for (const c of claims) expect(c.waitUs).toBeLessThan(1_000);
  });

  it('refuses a send claimed a timer tick or more ahead, and names the wait until it may ask again', async () => {
    const d = await limited(1);
    const interval = rateIntervalUs(1);
    const first = await store.flowControl.claimSend(d.id, interval);
    expect(first).toMatchObject({ claimed: true, waitUs: 0 });
    const second = await store.flowControl.claimSend(d.id, interval);
    expect(second.claimed).toBe(false);
    expect(second.sendAtUs).toBe(first.sendAtUs + 1_000_000);
    expect(second.waitUs).toBeGreaterThan(900_000);
    expect(second.waitUs).toBeLessThanOrEqual(1_000_000);
  });

  it('keeps an in-flight limiter row working across the upgrade: its queue and last send carry over in µs', async () => {
    // A fresh database at the schema before 0022, as a running deployment has it.
    const fresh = await makeDatabase();
    const old = fresh.raw() as unknown as Kysely<any>;
    try {
      const { error } = await new Migrator({ db: old, provider: migrationProvider }).migrateTo('0021_profile_consent');
      expect(error).toBeUndefined();
      const at = new Date().toISOString();
      await old.insertInto('sources').values({ id: 'src_upgrade', name: 'upgrade', write_key_hash: 'h', write_key_hint: 'k', created_at: at }).execute();
      await old
        .insertInto('destinations')
        .values({ id: 'dst_upgrade', source_id: 'src_upgrade', name: 'd', enabled: 1, webhooks: JSON.stringify([hook]), created_at: at, updated_at: at, max_requests_per_second: 5 })
        .execute();
      // A queue 5 s long and a request sent just now, written by the ms limiter.
      const nowMs = Date.now();
      await old.insertInto('destination_rates').values({ destination_id: 'dst_upgrade', next_slot_ms: nowMs + 5_000, last_send_ms: nowMs }).execute();

      const upgraded = await fresh.open();
      try {
        const row = await old.selectFrom('destination_rates').selectAll().where('destination_id', '=', 'dst_upgrade').executeTakeFirstOrThrow();
        expect({ next: Number(row.next_slot_us), last: Number(row.last_send_us) }).toEqual({ next: (nowMs + 5_000) * 1_000, last: nowMs * 1_000 });
        // The queue goes on where it stood: the next ask takes the slot 5 s out, one interval on from it after.
        const interval = rateIntervalUs(5);
        const slot = await upgraded.flowControl.reserveSlot('dst_upgrade', interval, HOUR_US);
        expect(slot).toMatchObject({ reserved: true, slotUs: (nowMs + 5_000) * 1_000 });
        expect(slot.waitUs).toBeGreaterThan(3_000_000);
        expect(slot.waitUs).toBeLessThanOrEqual(5_000_000);
        expect((await upgraded.flowControl.reserveSlot('dst_upgrade', interval, HOUR_US)).slotUs).toBe((nowMs + 5_000) * 1_000 + interval);
      } finally {
        await upgraded.close();
      }
    } finally {
      await fresh.close();
    }
  });
});
