import { Migrator, type Kysely } from 'kysely';
import { rateIntervalUs } from '../../src/delivery/flow-control';
import { migrationProvider } from '../../src/store/migrations';
import type { Store } from '../../src/store/types';
import { postgresStoreDatabase } from '../helpers/postgres-store-database';
import { createTestDatabase } from '../helpers/postgres';
import { sqliteStoreFile } from '../helpers/sqlite-store-file';

/**
 * Issue 34, sub-millisecond rate slots (migration 0022_rate_slots_us), on a SQLite file and a real
 * PostgreSQL database: a limit of N requests/s hands out slots 1/N s apart for any N up to 10,000,
 * where whole-millisecond slots made every limit above 1,000/s act as 1,000/s. Asserted on the
 * slot values the store hands out, never on how fast the machine is.
 */

const hook = { url: 'https://hooks.example.com/slots', headers: {} };
const HOUR_MS = 3_600_000;

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

  it('spaces 50 reservations in a burst under 5,000/s 200 µs apart, not 1 ms', async () => {
    const d = await limited(5_000);
    const slots = await Promise.all(Array.from({ length: 50 }, () => store.flowControl.reserveSlot(d.id, rateIntervalUs(5_000), HOUR_MS)));
    expect(slots.every((s) => s.reserved)).toBe(true);
    const taken = slots.map((s) => s.slotUs).sort((a, b) => a - b);
    expect(taken.map((slot) => slot - taken[0])).toEqual(taken.map((_slot, i) => i * 200));
    // Each wait is its slot's distance from the store's now: the last of 50 is under 10 ms away.
    for (const s of slots) expect(s.waitUs).toBeLessThanOrEqual(taken.at(-1)! - taken[0]);
  });

  it('under 10,000/s hands 100 sends 10 ms of slots, and claims a burst of 10 at send time 100 µs apart, none refused', async () => {
    const d = await limited(10_000);
    const interval = rateIntervalUs(10_000);
    const slots = await Promise.all(Array.from({ length: 100 }, () => store.flowControl.reserveSlot(d.id, interval, HOUR_MS)));
    const taken = slots.map((s) => s.slotUs).sort((a, b) => a - b);
    expect(taken.at(-1)! - taken[0]).toBe(99 * 100);
    // Ten sends claimed together fit within one timer tick (SEND_AHEAD_US) of each other: each is
    // claimed at once, one interval after the one before or later, and none is told to ask again.
    const claims = await Promise.all(Array.from({ length: 10 }, () => store.flowControl.claimSend(d.id, interval)));
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
        const interval = rateIntervalUs(5);
        const slot = await upgraded.flowControl.reserveSlot('dst_upgrade', interval, HOUR_MS);
        expect(slot).toMatchObject({ reserved: true, slotUs: (nowMs + 5_000) * 1_000 });
        expect(slot.waitUs).toBeGreaterThan(4_000_000);
        expect(slot.waitUs).toBeLessThanOrEqual(5_000_000);
        const claim = await upgraded.flowControl.claimSend('dst_upgrade', interval);
        expect(claim).toMatchObject({ claimed: false, sendAtUs: (nowMs + 200) * 1_000 });
      } finally {
        await upgraded.close();
      }
    } finally {
      await fresh.close();
    }
  });
});
