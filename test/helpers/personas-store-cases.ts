import type { SyncCursor } from '../../src/personas/sync-cursor';
import type { ComputationRef } from '../../src/personas/types';
import type { Store } from '../../src/store';
import { profileUpdatesOf as profileUpdates } from './calls';
import { MERGE_PATCH_CASES } from './personas-merge-patch-cases';

/**
 * The Personas store's rules (the sync's three steps: prepare, changes, commit; profile merges),
 * shared by the SQLite run (test/integration/personas-store.test.ts) and the PostgreSQL run
 * (test/integration/personas-postgres.test.ts): the same cases on both dialects.
 */

/** Opens a store on the dialect under test; each call is a separate process's view (its own connections). */
export function describePersonasStore(open: () => Promise<Store>): void {
  let store: Store;
  let worker: Store;

  beforeAll(async () => {
    store = await open();
    worker = await open();
  });
  afterAll(async () => {
    await store?.close();
    await worker?.close();
  });

  const now = Date.now();
  let n = 0;
  const record = (sourceId: string, calls: { type: 'identify' | 'track' | 'alias' | 'page'; raw: Record<string, unknown> }[]) =>
    store.personas.profiles.record(sourceId, profileUpdates(calls.map((c) => ({ ...c, raw: c.type === 'track' ? { messageId: `m${++n}`, ...c.raw } : c.raw })), now));

  async function newSource() {
    return (await store.sources.create('personas store test')).source.id;
  }

  async function newAudience(sourceId: string, definition: unknown) {
    const audience = await store.personas.audiences.create(sourceId, { name: 'A', key: `a_${++n}`, definition: definition as never, schedule: '*/15 * * * *', paused: true });
    return { kind: 'audience', id: audience.id } as ComputationRef;
  }

  async function allChanges(ref: ComputationRef, version: number) {
    const page = await worker.personas.sync.changes(ref, version, { start: true }, 1_000);
    if (page.status !== 'pending') throw new Error(page.status);
    return Object.fromEntries(page.changes.map((c) => [c.profileId, JSON.parse(c.value)]));
  }

  describe('a sync in three steps', () => {
    it('freezes a version at prepare: until commit, every prepare returns it unchanged, whatever happens to the data', async () => {
      const sourceId = await newSource();
      await record(sourceId, [{ type: 'identify', raw: { userId: 'p1', traits: { plan: 'pro' } } }]);
      const ref = await newAudience(sourceId, { trait: 'plan', op: 'eq', value: 'pro' });

      const first = await worker.personas.sync.prepare(ref, now);
      expect(first).toMatchObject({ status: 'ready', version: 1, changes: 1, reused: false });
      await record(sourceId, [{ type: 'identify', raw: { userId: 'p2', traits: { plan: 'pro' } } }]);
      // A rerun (the same worker or the API's connection) finishes version 1 as it was computed.
      expect(await store.personas.sync.prepare(ref, now + 60_000)).toEqual({ ...first, reused: true });
      expect(await allChanges(ref, 1)).toEqual({ p1: true });

      expect(await worker.personas.sync.commit(ref, 1)).toBe('committed');
      expect(await worker.personas.sync.commit(ref, 1)).toBe('already_committed');
      expect(await worker.personas.sync.changes(ref, 1, { start: true }, 10)).toEqual({ status: 'superseded' });

      // The next version sees the data as it is now, compared with the committed snapshot.
      expect(await worker.personas.sync.prepare(ref, now)).toMatchObject({ version: 2, changes: 1, reused: false });
      expect(await allChanges(ref, 2)).toEqual({ p2: true });
    });

    it('pages in profile-id order by position, and after a profile id (histories from before positions)', async () => {
      const sourceId = await newSource();
      await record(sourceId, ['b', 'd', 'a', 'c', 'e'].map((userId) => ({ type: 'identify' as const, raw: { userId, traits: { x: 1 } } })));
      const ref = await newAudience(sourceId, { trait: 'x', op: 'exists' });
      await worker.personas.sync.prepare(ref, now);
      const page = async (from: SyncCursor) => {
        const result = await worker.personas.sync.changes(ref, 1, from, 2);
        return result.status === 'pending' ? result.changes.map((c) => c.profileId) : result.status;
      };
      expect([await page({ start: true }), await page({ position: 2 }), await page({ position: 4 }), await page({ position: 5 })]).toEqual([['a', 'b'], ['c', 'd'], ['e'], []]);
      expect([await page({ afterProfileId: 'b' }), await page({ afterProfileId: 'd' }), await page({ afterProfileId: 'e' })]).toEqual([['c', 'd'], ['e'], []]);
    });

    it('an audience member who leaves is sent false and leaves the snapshot; coming back is true again', async () => {
      const sourceId = await newSource();
      await record(sourceId, [{ type: 'identify', raw: { userId: 'm', traits: { vip: true } } }]);
      const ref = await newAudience(sourceId, { trait: 'vip', op: 'eq', value: true });
      const sync = async () => {
        const prepared = await worker.personas.sync.prepare(ref, now);
        if (prepared.status !== 'ready') throw new Error(prepared.status);
        const changes = await allChanges(ref, prepared.version);
        await worker.personas.sync.commit(ref, prepared.version);
        return changes;
      };
      expect(await sync()).toEqual({ m: true });
      await record(sourceId, [{ type: 'identify', raw: { userId: 'm', traits: { vip: false } } }]);
      expect(await sync()).toEqual({ m: false });
      expect(await sync()).toEqual({});
      await record(sourceId, [{ type: 'identify', raw: { userId: 'm', traits: { vip: true } } }]);
      expect(await sync()).toEqual({ m: true });
    });

    it('a computed trait is sent its new value on change, and 0 (count) when no event is left in the window', async () => {
      const sourceId = await newSource();
      const old = new Date(now - 10 * 86_400_000).toISOString();
      await record(sourceId, [{ type: 'track', raw: { userId: 't', event: 'Login', timestamp: old } }]);
      const trait = await store.personas.computedTraits.create(sourceId, { name: 'Logins', key: 'logins', definition: { type: 'count', event: 'Login', within: '7d' }, schedule: '@daily', paused: true });
      const ref: ComputationRef = { kind: 'computed_trait', id: trait.id };
      const sync = async (at: number) => {
        const prepared = await worker.personas.sync.prepare(ref, at);
        if (prepared.status !== 'ready') throw new Error(prepared.status);
        const changes = await allChanges(ref, prepared.version);
        await worker.personas.sync.commit(ref, prepared.version);
        return changes;
      };
      expect(await sync(now - 5 * 86_400_000)).toEqual({ t: 1 });
      expect(await sync(now)).toEqual({ t: 0 });
      expect(await sync(now)).toEqual({});
    });

    it('deleting a definition drops its snapshot; a sync of it finds it gone', async () => {
      const sourceId = await newSource();
      await record(sourceId, [{ type: 'identify', raw: { userId: 'x', traits: { a: 1 } } }]);
      const ref = await newAudience(sourceId, { trait: 'a', op: 'exists' });
      await worker.personas.sync.prepare(ref, now);
      expect(await store.personas.audiences.delete(ref.id)).toBe(true);
      expect(await worker.personas.sync.prepare(ref, now)).toEqual({ status: 'gone' });
      expect(await worker.personas.sync.changes(ref, 1, { start: true }, 10)).toEqual({ status: 'gone' });
      expect(await worker.personas.sync.commit(ref, 1)).toBe('gone');
    });
  });

  describe('profiles', () => {
    it('identify merges traits over earlier ones (nested objects merge, null removes)', async () => {
      const sourceId = await newSource();
      await record(sourceId, [
        { type: 'identify', raw: { userId: 'u', traits: { plan: 'free', address: { city: 'Oslo' }, nickname: 'x' } } },
        { type: 'identify', raw: { userId: 'u', traits: { plan: 'pro', address: { street: 'Main' }, nickname: null } } },
      ]);
      expect((await store.personas.profiles.get(sourceId, 'u'))?.traits).toEqual({ plan: 'pro', address: { city: 'Oslo', street: 'Main' } });
    });

    it('alias chains: an anonymous visitor, then a user id, then a new user id are one person with one history', async () => {
      const sourceId = await newSource();
      await record(sourceId, [
        { type: 'identify', raw: { anonymousId: 'anon', traits: { theme: 'dark', plan: 'trial' } } },
        { type: 'track', raw: { anonymousId: 'anon', event: 'Viewed' } },
      ]);
      await record(sourceId, [
        { type: 'identify', raw: { userId: 'old-id', traits: { plan: 'pro' } } },
        { type: 'track', raw: { userId: 'old-id', event: 'Ordered' } },
        { type: 'alias', raw: { previousId: 'anon', userId: 'old-id' } },
      ]);
      await record(sourceId, [{ type: 'alias', raw: { previousId: 'old-id', userId: 'new-id' } }, { type: 'track', raw: { anonymousId: 'anon', event: 'Viewed again' } }]);
      for (const id of ['anon', 'old-id', 'new-id']) {
        expect(await store.personas.profiles.get(sourceId, id)).toMatchObject({ profileId: 'new-id', userId: 'new-id', traits: { theme: 'dark', plan: 'pro' }, aliases: ['anon', 'old-id'], eventCount: 3 });
      }
    });

    it('an anonymous id sent with a user id links the two without an alias call', async () => {
      const sourceId = await newSource();
      await record(sourceId, [{ type: 'track', raw: { anonymousId: 'v1', event: 'Landed' } }]);
      await record(sourceId, [{ type: 'identify', raw: { userId: 'w', anonymousId: 'v1', traits: { email: 'w@example.test' } } }]);
      expect(await store.personas.profiles.get(sourceId, 'v1')).toMatchObject({ profileId: 'w', eventCount: 1, aliases: ['v1'] });
    });

    it("keeps the consent preferences of the newest event that carried any, across requests, call types and a merge", async () => {
      const sourceId = await newSource();
      const consent = (categoryPreferences: Record<string, boolean>) => ({ consent: { categoryPreferences } });
      // A page call alone makes no profile; it updates one that exists.
      await record(sourceId, [{ type: 'page', raw: { userId: 'c', name: 'Home', timestamp: '2026-03-01T09:00:00Z', context: consent({ ads: true }) } }]);
      expect(await store.personas.profiles.get(sourceId, 'c')).toBeUndefined();
      await record(sourceId, [{ type: 'identify', raw: { userId: 'c', traits: {}, timestamp: '2026-03-01T09:05:00Z', context: consent({ ads: false }) } }]);
      await record(sourceId, [{ type: 'page', raw: { userId: 'c', name: 'Settings', timestamp: '2026-03-01T09:10:00Z', context: consent({ ads: true }) } }]);
      // Older than what is kept: arriving later changes nothing. In one request the newest wins.
      await record(sourceId, [
        { type: 'track', raw: { userId: 'c', event: 'Late', timestamp: '2026-03-01T08:00:00Z', context: consent({}) } },
        { type: 'track', raw: { userId: 'c', event: 'Later', timestamp: '2026-03-01T09:10:00Z', context: consent({ ads: true, analytics: true }) } },
      ]);
      expect((await store.personas.profiles.get(sourceId, 'c'))?.consent).toEqual({ categoryPreferences: { ads: true, analytics: true }, timestamp: '2026-03-01T09:10:00.000Z' });
      // An anonymous visitor's newer choice survives logging in as c.
      await record(sourceId, [{ type: 'track', raw: { anonymousId: 'visitor', event: 'Landed', timestamp: '2026-03-01T09:20:00Z', context: consent({ ads: false }) } }]);
      await record(sourceId, [{ type: 'alias', raw: { userId: 'c', previousId: 'visitor' } }]);
      expect((await store.personas.profiles.get(sourceId, 'c'))?.consent).toEqual({ categoryPreferences: { ads: false }, timestamp: '2026-03-01T09:20:00.000Z' });
    });

    it('a future timestamp (no sentAt) does not pin a profile\'s consent: a later revocation wins', async () => {
      const sourceId = await newSource();
      const consent = (categoryPreferences: Record<string, boolean>) => ({ consent: { categoryPreferences } });
      await record(sourceId, [{ type: 'identify', raw: { userId: 'pinned', traits: {}, timestamp: '2099-01-01T00:00:00Z', context: consent({ ads: true }) } }]);
      expect((await store.personas.profiles.get(sourceId, 'pinned'))?.consent).toEqual({ categoryPreferences: { ads: true }, timestamp: new Date(now).toISOString() });
      const revokedAt = new Date(now).toISOString();
      await store.personas.profiles.record(sourceId, profileUpdates([{ type: 'identify', raw: { userId: 'pinned', traits: {}, timestamp: revokedAt, context: consent({ ads: false }) } }], now + 1_000));
      expect((await store.personas.profiles.get(sourceId, 'pinned'))?.consent).toMatchObject({ categoryPreferences: { ads: false } });
    });

    it('a consent time stored from a future timestamp before the fix pins nothing either', async () => {
      const sourceId = await newSource();
      const consent = (categoryPreferences: Record<string, boolean>) => ({ consent: { categoryPreferences } });
      // What a row written before the rule holds: the client's future timestamp as its consent time.
      await store.personas.profiles.record(sourceId, [{ type: 'identify', userId: 'pinned-old', traits: {} }, { type: 'consent', userId: 'pinned-old', preferences: { ads: true }, timestamp: '2099-01-01T00:00:00.000Z', receivedAt: '2099-01-01T00:00:00.000Z' }]);
      await record(sourceId, [{ type: 'identify', raw: { userId: 'pinned-old', traits: {}, context: consent({ ads: false }) } }]);
      expect((await store.personas.profiles.get(sourceId, 'pinned-old'))?.consent).toMatchObject({ categoryPreferences: { ads: false } });
    });

    it('a re-sent track call (same messageId) is recorded once', async () => {
      const sourceId = await newSource();
      const call = { type: 'track' as const, raw: { userId: 'r', event: 'Paid', messageId: 'same-id' } };
      await record(sourceId, [call]);
      await record(sourceId, [call, call]);
      expect(await store.personas.profiles.get(sourceId, 'r')).toMatchObject({ eventCount: 1 });
    });

    it('forgetUsers removes the user from every source, with aliases, events, snapshot rows and pending changes', async () => {
      const [s1, s2] = [await newSource(), await newSource()];
      for (const sourceId of [s1, s2]) {
        await record(sourceId, [
          { type: 'identify', raw: { userId: 'forget-me', anonymousId: 'fm-anon', traits: { a: 1 } } },
          { type: 'track', raw: { userId: 'forget-me', event: 'E' } },
          { type: 'identify', raw: { userId: 'keep-me', traits: { a: 1 } } },
        ]);
      }
      const ref = await newAudience(s1, { trait: 'a', op: 'exists' });
      await worker.personas.sync.prepare(ref, now);
      await worker.personas.sync.commit(ref, 1);
      await record(s1, [{ type: 'identify', raw: { userId: 'forget-me', traits: { a: null } } }]);
      await worker.personas.sync.prepare(ref, now);
      expect(await allChanges(ref, 2)).toEqual({ 'forget-me': false });

      expect(await store.personas.profiles.forgetUsers(['forget-me'])).toBe(2);
      for (const sourceId of [s1, s2]) {
        expect(await store.personas.profiles.get(sourceId, 'forget-me')).toBeUndefined();
        expect(await store.personas.profiles.get(sourceId, 'fm-anon')).toBeUndefined();
        expect(await store.personas.profiles.get(sourceId, 'keep-me')).toBeDefined();
      }
      expect(await allChanges(ref, 2)).toEqual({});
      await worker.personas.sync.commit(ref, 2);
      expect(await worker.personas.sync.prepare(ref, now)).toMatchObject({ version: 3, changes: 0 });
    });
  });

  describe('traits merge as RFC 7396 merge patches', () => {
    const identify = (userId: string, traits: Record<string, unknown>) => ({ type: 'identify' as const, raw: { userId, traits } });

    it.each(MERGE_PATCH_CASES)('%s (one request per identify)', async (_rule, patches, expected) => {
      const sourceId = await newSource();
      for (const traits of patches) await record(sourceId, [identify('u', traits)]);
      expect((await store.personas.profiles.get(sourceId, 'u'))?.traits).toEqual(expected);
    });

    it.each(MERGE_PATCH_CASES)('%s (all identifies in one request)', async (_rule, patches, expected) => {
      const sourceId = await newSource();
      await record(sourceId, [identify('u', { seen: 1 }), { type: 'track', raw: { userId: 'u', event: 'E' } }]);
      await record(sourceId, patches.map((traits) => identify('u', traits)));
      expect((await store.personas.profiles.get(sourceId, 'u'))?.traits).toEqual({ seen: 1, ...expected });
    });

    it('a new profile takes its first identify in a request and merges the rest, in call order', async () => {
      const sourceId = await newSource();
      await record(sourceId, [identify('n', { a: 1, o: { x: 1 } }), { type: 'track', raw: { userId: 'n', event: 'E' } }, identify('n', { a: 2, o: { y: 2 } }), identify('n', { a: null })]);
      expect(await store.personas.profiles.get(sourceId, 'n')).toMatchObject({ userId: 'n', traits: { o: { x: 1, y: 2 } }, eventCount: 1 });
    });

    it('kept traits stay in place and new ones come after them', async () => {
      const sourceId = await newSource();
      await record(sourceId, [identify('k', { b: 1, a: 1, c: 1 })]);
      await record(sourceId, [identify('k', { z: 1, a: 2, c: null })]);
      expect(Object.keys((await store.personas.profiles.get(sourceId, 'k'))!.traits)).toEqual(['b', 'a', 'z']);
    });

    it('an anonymous profile keeps no user id until one is sent; then it keeps the first', async () => {
      const sourceId = await newSource();
      await record(sourceId, [{ type: 'identify', raw: { anonymousId: 'anon-1', traits: { a: 1 } } }]);
      expect(await store.personas.profiles.get(sourceId, 'anon-1')).toMatchObject({ userId: null, traits: { a: 1 } });
    });
  });

  describe('order and resumption', () => {
    it('pages and aliases follow ids in byte order: upper case before lower case', async () => {
      const sourceId = await newSource();
      const ids = ['b', 'B', 'a', 'A', '_x', 'a-b', 'ab'];
      await record(sourceId, ids.map((userId) => ({ type: 'identify' as const, raw: { userId, traits: { x: 1 } } })));
      const ref = await newAudience(sourceId, { trait: 'x', op: 'exists' });
      await worker.personas.sync.prepare(ref, now);
      const pages: string[][] = [];
      let from: SyncCursor = { start: true };
      for (;;) {
        const page = await worker.personas.sync.changes(ref, 1, from, 2);
        if (page.status !== 'pending') throw new Error(page.status);
        if (page.changes.length === 0) break;
        pages.push(page.changes.map((c) => c.profileId));
        from = { afterProfileId: page.changes[page.changes.length - 1].profileId };
      }
      expect(pages).toEqual([['A', 'B'], ['_x', 'a'], ['a-b', 'ab'], ['b']]);

      await record(sourceId, [{ type: 'alias', raw: { previousId: 'b', userId: 'Z' } }, { type: 'alias', raw: { previousId: 'B', userId: 'Z' } }, { type: 'alias', raw: { previousId: '_x', userId: 'Z' } }]);
      expect((await store.personas.profiles.get(sourceId, 'Z'))?.aliases).toEqual(['B', '_x', 'b']);
    });

    it('a pending version outlives the process that computed it: a new one finishes it as computed, then moves on', async () => {
      const sourceId = await newSource();
      await record(sourceId, ['p1', 'p2', 'p3'].map((userId) => ({ type: 'identify' as const, raw: { userId, traits: { plan: 'pro' } } })));
      const ref = await newAudience(sourceId, { trait: 'plan', op: 'eq', value: 'pro' });

      const crashing = await open();
      const prepared = await crashing.personas.sync.prepare(ref, now);
      expect(prepared).toMatchObject({ status: 'ready', version: 1, changes: 3, reused: false });
      const firstPage = await crashing.personas.sync.changes(ref, 1, { start: true }, 2);
      await crashing.close(); // the worker dies after sending one page, before commit

      await record(sourceId, [
        { type: 'identify', raw: { userId: 'p1', traits: { plan: 'free' } } },
        { type: 'identify', raw: { userId: 'p4', traits: { plan: 'pro' } } },
      ]);
      const restarted = await open();
      try {
        expect(await restarted.personas.sync.prepare(ref, now + 60_000)).toEqual({ ...prepared, reused: true });
        expect(await restarted.personas.sync.changes(ref, 1, { start: true }, 2)).toEqual(firstPage);
        expect(await allChanges(ref, 1)).toEqual({ p1: true, p2: true, p3: true });
        expect(await restarted.personas.sync.commit(ref, 1)).toBe('committed');
        expect(await restarted.personas.sync.prepare(ref, now + 60_000)).toMatchObject({ version: 2, changes: 2, reused: false });
        expect(await allChanges(ref, 2)).toEqual({ p1: false, p4: true });
      } finally {
        await restarted.close();
      }
    });

    it('a computed trait\'s pending value is frozen too: a rerun sends the value computed first', async () => {
      const sourceId = await newSource();
      await record(sourceId, [{ type: 'track', raw: { userId: 't', event: 'Paid', properties: { amount: 10.25 } } }, { type: 'track', raw: { userId: 't', event: 'Paid', properties: { amount: 5 } } }]);
      const trait = await store.personas.computedTraits.create(sourceId, { name: 'Spent', key: 'spent', definition: { type: 'sum', event: 'Paid', property: 'amount' }, schedule: '@daily', paused: true });
      const ref: ComputationRef = { kind: 'computed_trait', id: trait.id };
      expect(await worker.personas.sync.prepare(ref, now)).toMatchObject({ version: 1, changes: 1 });
      await record(sourceId, [{ type: 'track', raw: { userId: 't', event: 'Paid', properties: { amount: 1 } } }]);
      expect(await store.personas.sync.prepare(ref, now)).toMatchObject({ version: 1, changes: 1, reused: true });
      expect(await allChanges(ref, 1)).toEqual({ t: 15.25 });
      await worker.personas.sync.commit(ref, 1);
      expect(await worker.personas.sync.prepare(ref, now)).toMatchObject({ version: 2, changes: 1 });
      expect(await allChanges(ref, 2)).toEqual({ t: 16.25 });
    });
  });
}
