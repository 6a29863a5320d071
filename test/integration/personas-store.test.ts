import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { profileUpdatesOf as profileUpdates } from '../helpers/calls';
import type { ComputationRef } from '../../src/personas/types';
import { openStore, type Store } from '../../src/store';

/**
 * The Personas store on a real SQLite file, opened twice like the API and the worker open it (used
 * one after the other here: better-sqlite3 is synchronous, so two connections of one process
 * waiting on each other's lock would block each other's event loop), the sync's three steps
 * (prepare, changes, commit) and the profile merges the sync relies on.
 */
let dir: string;
let store: Store;
let worker: Store;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-personas-'));
  store = await openStore({ databasePath: path.join(dir, 'switchyard.db') });
  worker = await openStore({ databasePath: path.join(dir, 'switchyard.db') });
});
afterAll(async () => {
  await store.close();
  await worker.close();
  rmSync(dir, { recursive: true, force: true });
});

const now = Date.now();
let n = 0;
const record = (sourceId: string, calls: { type: 'identify' | 'track' | 'alias'; raw: Record<string, unknown> }[]) =>
  store.personas.profiles.record(sourceId, profileUpdates(calls.map((c) => ({ ...c, raw: c.type === 'track' ? { messageId: `m${++n}`, ...c.raw } : c.raw })), now));

async function newSource() {
  return (await store.sources.create('personas store test')).source.id;
}

async function newAudience(sourceId: string, definition: unknown) {
  const audience = await store.personas.audiences.create(sourceId, { name: 'A', key: `a_${++n}`, definition: definition as never, schedule: '*/15 * * * *', paused: true });
  return { kind: 'audience', id: audience.id } as ComputationRef;
}

async function allChanges(ref: ComputationRef, version: number) {
  const page = await worker.personas.sync.changes(ref, version, undefined, 1_000);
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
    expect(await worker.personas.sync.changes(ref, 1, undefined, 10)).toEqual({ status: 'superseded' });

    // The next version sees the data as it is now, compared with the committed snapshot.
    expect(await worker.personas.sync.prepare(ref, now)).toMatchObject({ version: 2, changes: 1, reused: false });
    expect(await allChanges(ref, 2)).toEqual({ p2: true });
  });

  it('pages by profile id after a cursor', async () => {
    const sourceId = await newSource();
    await record(sourceId, ['b', 'd', 'a', 'c', 'e'].map((userId) => ({ type: 'identify' as const, raw: { userId, traits: { x: 1 } } })));
    const ref = await newAudience(sourceId, { trait: 'x', op: 'exists' });
    await worker.personas.sync.prepare(ref, now);
    const page = async (after?: string) => {
      const result = await worker.personas.sync.changes(ref, 1, after, 2);
      return result.status === 'pending' ? result.changes.map((c) => c.profileId) : result.status;
    };
    expect([await page(), await page('b'), await page('d'), await page('e')]).toEqual([['a', 'b'], ['c', 'd'], ['e'], []]);
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
    expect(await worker.personas.sync.changes(ref, 1, undefined, 10)).toEqual({ status: 'gone' });
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
