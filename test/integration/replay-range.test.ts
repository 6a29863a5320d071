import type { Replay } from '../../src/delivery/replay';
import { replayFinished } from '../helpers/replay-api';
import { ADMIN_TOKEN, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';
import type { Receiver } from '../helpers/receiver';

/**
 * Replays say what they are: a dry run is marked `dryRun` in the replay's view and the
 * list; a range starting before the archive answers `archiveFrom` beside the counts; a range wholly
 * past retention or in the future is a 400 saying so; a date without a time gets an example.
 * Through the real API and the run's worker; every replay is of this file's own source.
 */
let system: TestSystem;
let receiver: Receiver;
const RETENTION_MS = 60 * 60_000;
useSystem((s, r) => ((system = s), (receiver = r)), { overrides: { archiveRetention: RETENTION_MS } });

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const post = (payload: Record<string, unknown>) => system.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload });
const read = async (id: string) => (await system.app.inject({ method: 'GET', url: `/admin/replays/${id}`, headers: auth })).json<Replay & { archiveFrom?: string }>();
const listed = async (id: string) => (await system.app.inject({ method: 'GET', url: '/admin/replays?limit=1000', headers: auth })).json<{ replays: (Replay & { archiveFrom?: string })[] }>().replays.find((r) => r.id === id);

async function ownDestination() {
  const { source, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
  return { sourceId: source.id, destinationId: destination.id };
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

it('marks a dry run dryRun: true, and a real replay dryRun: false, in its view and in the list', async () => {
  const ids = await ownDestination();
  const range = { since: ago(60_000), until: ago(-1_000) };
  const dry = await post({ ...ids, ...range, dryRun: true });
  expect(dry.statusCode).toBe(202);
  const dryId = dry.json<{ id: string }>().id;
  const real = await post({ ...ids, ...range });
  const realId = real.json<{ id: string }>().id;
  await replayFinished(system, dryId);
  await replayFinished(system, realId);
  expect(await read(dryId)).toMatchObject({ id: dryId, dryRun: true });
  expect(await listed(dryId)).toMatchObject({ dryRun: true });
  expect(await read(realId)).toMatchObject({ id: realId, dryRun: false });
  expect(await listed(realId)).toMatchObject({ dryRun: false });
});

it('answers archiveFrom beside the counts when the range starts before the oldest archived moment', async () => {
  const ids = await ownDestination();
  const before = Date.now();
  const started = await post({ ...ids, since: ago(3 * RETENTION_MS), until: ago(-1_000), dryRun: true });
  expect(started.statusCode).toBe(202);
  const { id, archiveFrom } = started.json<{ id: string; archiveFrom: string }>();
  expect(Date.parse(archiveFrom)).toBeGreaterThanOrEqual(before - RETENTION_MS);
  expect(Date.parse(archiveFrom)).toBeLessThanOrEqual(Date.now() - RETENTION_MS);
  const view = await replayFinished(system, id);
  expect(view).toMatchObject({ dryRun: true, matched: 0 });
  expect(Date.parse((view as Replay & { archiveFrom: string }).archiveFrom)).toBe(Date.parse(view.createdAt) - RETENTION_MS);
  expect((await listed(id))?.archiveFrom).toBe((view as Replay & { archiveFrom: string }).archiveFrom);

  const within = await post({ ...ids, since: ago(60_000), until: ago(-1_000), dryRun: true });
  expect(within.json()).not.toHaveProperty('archiveFrom');
  expect(await replayFinished(system, within.json<{ id: string }>().id)).not.toHaveProperty('archiveFrom');
});

it('refuses a range wholly past retention, or in the future, saying so', async () => {
  const ids = await ownDestination();
  const past = await post({ ...ids, since: ago(5 * RETENTION_MS), until: ago(2 * RETENTION_MS) });
  expect(past.statusCode).toBe(400);
  expect(past.json<{ message: string }>().message).toMatch(/^until: is before the oldest message still archived \(received at \S+; ARCHIVE_RETENTION is 1h\): the whole range is past retention, nothing in it can be replayed$/);
  const future = await post({ ...ids, since: ago(-RETENTION_MS), until: ago(-2 * RETENTION_MS) });
  expect(future.statusCode).toBe(400);
  expect(future.json<{ message: string }>().message).toMatch(/^since: is in the future \(now is \S+\): nothing received in this range is archived yet$/);
});

it('answers a date without a time with an example of the format', async () => {
  const ids = await ownDestination();
  const refused = await post({ ...ids, since: '2026-11-28', until: ago(0) });
  expect(refused.statusCode).toBe(400);
  expect(refused.json()).toEqual({ code: 'invalid_request', message: 'since: must match format "date-time", e.g. 2026-11-28T10:00:00Z' });
});
