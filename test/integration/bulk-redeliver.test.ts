import { MockActivityEnvironment } from '@temporalio/testing';
import { makeRedeliveryActivities, type RedeliveryPageResult } from '../../src/activities/redeliver-matching';
import { deliveryPolicy } from '../../src/config';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { RedeliveryJob } from '../../src/delivery/redelivery-job';
import type { RedeliveryJobView } from '../../src/ports';
import { temporalRedeliveryRuns } from '../../src/temporal/redelivery-jobs';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

/**
 * Bulk redelivery: `POST /admin/sources/:sourceId/redeliver` runs a Temporal workflow
 * that sends every matching ended delivery again, once, and `GET /admin/redeliveries/:id` follows
 * it. On the run's real Temporal server and worker.
 */
let system: TestSystem;
let receiver: Receiver;
const others: Receiver[] = [];
useSystem(
  (s, r) => {
    system = s;
    receiver = r;
  },
  { alsoClose: others },
);

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function startJob(sourceId: string, body: Record<string, unknown>) {
  const response = await system.app.inject({ method: 'POST', url: `/admin/sources/${sourceId}/redeliver`, headers: auth, payload: body });
  return { status: response.statusCode, body: response.json<{ id?: string; code?: string; message?: string }>() };
}

async function job(id: string) {
  const response = await system.app.inject({ method: 'GET', url: `/admin/redeliveries/${id}`, headers: auth });
  return { status: response.statusCode, body: response.json<RedeliveryJobView & { code?: string; message?: string }>() };
}

/** Asks again until the answer fits, for at most `timeoutMs` (visibility and the job both take a moment). */
async function until<T>(ask: () => Promise<T>, fits: (answer: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await ask();
    if (fits(answer) || Date.now() > deadline) return answer;
    await new Promise((wake) => setTimeout(wake, 250));
  }
}

const finishedJob = async (id: string) => (await until(() => job(id), (answer) => answer.body.status !== 'running', 45_000)).body;

/** Requests per messageId at a receiver. */
function receiptsById(at: Receiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of at.requests) {
    const { messageId } = JSON.parse(request.body) as { messageId: string };
    counts.set(messageId, (counts.get(messageId) ?? 0) + 1);
  }
  return counts;
}

/** Sends messages that every webhook refuses (400: permanent) and waits until visibility lists them failed. */
async function failedDeliveries(sourceId: string, writeKey: string, messageIds: string[]) {
  for (const messageId of messageIds) await send(system.app, writeKey, 'track', { messageId, userId: 'u-bulk', event: 'Refused' });
  for (const messageId of messageIds) expect(await deliveryResult(system.client, sourceId, messageId)).toMatchObject({ ok: false });
  const listed = await until(
    async () => (await system.app.inject({ method: 'GET', url: '/admin/deliveries', query: { sourceId, status: 'failed', limit: '500' }, headers: auth })).json<{ deliveries: unknown[] }>(),
    (page) => page.deliveries.length === messageIds.length,
  );
  expect(listed.deliveries).toHaveLength(messageIds.length);
}

/** Runs of one message's workflow id, from its latest run back through visibility. */
async function runsOf(sourceId: string, messageId: string): Promise<number> {
  let runs = 0;
  for await (const _ of system.client.workflow.list({ query: `WorkflowId = "${deliveryWorkflowId(sourceId, messageId)}"` })) runs++;
  return runs;
}

describe('POST /admin/sources/:sourceId/redeliver', () => {
  it('sends every failed delivery of a time range once more, with its messageId, and a second job right after sends none again', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    receiver.respond(() => ({ status: 400 }));
    const ids = Array.from({ length: 12 }, (_, i) => `bulk-${i}`);
    await failedDeliveries(source.id, writeKey, ids);
    expect([...receiptsById(receiver).values()]).toEqual(ids.map(() => 1));

    receiver.respond(() => ({ status: 200 }));
    const until_ = new Date(Date.now() + 60_000).toISOString();
    const started = await startJob(source.id, { status: 'failed', since, until: until_ });
    expect(started.status).toBe(202);
    expect(started.body.id).toMatch(/^rdl_[0-9a-f]{32}$/);

    const done = await finishedJob(started.body.id!);
    expect(done).toMatchObject({ id: started.body.id, status: 'completed', matched: 12, started: 12, finished: 12, skipped: 0, sourceId: source.id, filter: { status: 'failed', since, until: until_ } });
    const counts = receiptsById(receiver);
    expect(ids.map((id) => counts.get(id))).toEqual(ids.map(() => 2));
    for (const id of ids) expect(await deliveryResult(system.client, source.id, id)).toMatchObject({ ok: true });

    // The old failed runs still match (closed, in range), but each message's latest run is now the
    // first job's redelivery: the second job starts nothing.
    const again = await startJob(source.id, { status: 'failed', since, until: until_ });
    expect(await finishedJob(again.body.id!)).toMatchObject({ status: 'completed', matched: 12, started: 0, finished: 0, skipped: 12 });
    expect(receiptsById(receiver)).toEqual(counts);
  });

  it("with destinationId sends a message again to that destination only, and to no other source's deliveries", async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const refusing = await startReceiver(() => ({ status: 400 }));
    const accepting = await startReceiver();
    others.push(refusing, accepting);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, { webhooks: [{ url: refusing.url, headers: {} }] });
    await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: accepting.url, headers: {} }] });
    const ids = ['dest-0', 'dest-1', 'dest-2'];
    await failedDeliveries(source.id, writeKey, ids);
    expect(receiptsById(accepting).size).toBe(3);

    refusing.respond(() => ({ status: 200 }));
    const started = await startJob(source.id, { status: 'failed', since, until: new Date(Date.now() + 60_000).toISOString(), destinationId: destination.id });
    expect(started.status).toBe(202);
    expect(await finishedJob(started.body.id!)).toMatchObject({ status: 'completed', matched: 3, started: 3, finished: 3 });
    expect([...receiptsById(refusing).entries()].sort()).toEqual(ids.map((id) => [id, 2]));
    expect([...receiptsById(accepting).values()]).toEqual([1, 1, 1]);
  });

  it('refuses a filter it cannot run, naming the field and the rule', async () => {
    const { source } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const other = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const range = { since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' };
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ status: 'failed', until: range.until }, 400, /^since: is required/],
      [{ status: 'failed', since: range.since }, 400, /^until: is required/],
      [{ since: range.since, until: range.until }, 400, /^status: is required/],
      [{ status: 'delivered', ...range }, 400, /^status: .*failed, stopped/],
      [{ status: 'failed', since: 'yesterday', until: range.until }, 400, /^since: must match format "date-time"/],
      [{ status: 'failed', since: range.until, until: range.since }, 400, /^until: must be later than since/],
      [{ status: 'failed', since: range.since, until: range.since }, 400, /^until: must be later than since/],
      [{ status: 'failed', ...range, destinationId: 'nope' }, 400, /^destinationId: must match pattern/],
      [{ status: 'failed', ...range, destinationId: other.destination.id }, 400, new RegExp(`^destinationId: is not a destination of source ${source.id}`)],
      [{ status: 'failed', ...range, extra: 1 }, 400, /^extra: is not a known field/],
    ];
    for (const [body, status, message] of cases) {
      const answer = await startJob(source.id, body);
      expect({ body, status: answer.status, code: answer.body.code }).toEqual({ body, status, code: 'invalid_request' });
      expect(answer.body.message).toMatch(message);
    }
    const unknownSource = await startJob('src_00000000000000000000000000000000', { status: 'failed', ...range });
    expect(unknownSource).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});

describe('GET /admin/redeliveries/:id', () => {
  it('is 404 for an id no job has, and for one that could never be a job id', async () => {
    expect(await job('rdl_00000000000000000000000000000000')).toMatchObject({ status: 404, body: { code: 'not_found', message: 'redelivery job rdl_00000000000000000000000000000000 not found' } });
    expect(await job('message:abc')).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});

describe('a page of a job run again (an activity retried after a worker crashed mid-page)', () => {
  it('counts the redeliveries the first attempt started and starts none of them twice', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    receiver.respond(() => ({ status: 400 }));
    const ids = Array.from({ length: 5 }, (_, i) => `page-${i}`);
    await failedDeliveries(source.id, writeKey, ids);
    receiver.respond(() => ({ status: 200 }));

    // The job's real activity on the real server, called as the worker would call it, twice.
    const activities = makeRedeliveryActivities(system.store, deliveryPolicy(system.config), temporalRedeliveryRuns(system.client, system.config.temporalTaskQueue, system.keyring));
    const job: RedeliveryJob = { id: 'rdl_0123456789abcdef0123456789abcdef', sourceId: source.id, filter: { status: 'failed', since, until: new Date(Date.now() + 60_000).toISOString() }, createdAt: new Date().toISOString() };
    type PageInput = Parameters<typeof activities.redeliverPage>[0];
    const redeliverPage = (input: PageInput) => activities.redeliverPage(input);
    const runPage = (input: PageInput) => new MockActivityEnvironment().run<[PageInput], RedeliveryPageResult, typeof redeliverPage>(redeliverPage, input);
    const page = () => runPage({ job, size: 100 });

    const first = await page();
    expect(first).toMatchObject({ matched: 5, started: 5, skipped: 0 });
    expect(first.next).toBeUndefined();
    const retried = await page();
    expect(retried).toMatchObject({ matched: 5, started: 5, skipped: 0 });
    expect(retried.inFlight.map((run) => run.runId).sort()).toEqual(first.inFlight.map((run) => run.runId).sort());

    // Another job over the same range finds every message redelivered since: it starts nothing.
    const otherJob = await runPage({ job: { ...job, id: 'rdl_ffffffffffffffffffffffffffffffff' }, size: 100 });
    expect(otherJob).toMatchObject({ matched: 5, started: 0, skipped: 5 });

    for (const id of ids) expect(await deliveryResult(system.client, source.id, id)).toMatchObject({ ok: true });
    const runs = await until(() => Promise.all(ids.map((id) => runsOf(source.id, id))), (counts) => counts.every((n) => n === 2));
    expect(runs).toEqual(ids.map(() => 2));
    const counts = receiptsById(receiver);
    expect(ids.map((id) => counts.get(id))).toEqual(ids.map(() => 2));
  });
});

it('both routes are in the API document, with the admin Bearer token and the filter as the request body', async () => {
  type Operation = { security?: unknown; requestBody?: { content: Record<string, { schema: { required?: string[]; properties: Record<string, unknown> } }> } };
  const document = (await system.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, Operation>> }>();
  const post = document.paths['/admin/sources/{sourceId}/redeliver'].post;
  expect(post.security).toEqual([{ adminToken: [] }]);
  const body = post.requestBody!.content['application/json'].schema;
  expect(body.required?.sort()).toEqual(['since', 'status', 'until']);
  expect(Object.keys(body.properties).sort()).toEqual(['destinationId', 'since', 'status', 'until']);
  expect(document.paths['/admin/redeliveries/{id}'].get.security).toEqual([{ adminToken: [] }]);
});
