import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import type { DeliveryInput } from '../../src/delivery/types';
import { STATUS } from '../../src/workflows/search-attributes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

/**
 * The admin API's deliveries: listed from Temporal visibility, read from a workflow's
 * history, delivered again as a new run. On the run's real Temporal server and worker.
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

interface Row {
  messageId: string;
  sourceId: string;
  type: string;
  userId?: string;
  status: string;
  startedAt: string;
  closedAt?: string;
  workflowId: string;
  runId: string;
}

async function list(query: Record<string, string>) {
  const response = await system.app.inject({ method: 'GET', url: '/admin/deliveries', query, headers: auth });
  return { status: response.statusCode, body: response.json<{ deliveries: Row[]; nextCursor?: string; code?: string; message?: string }>() };
}

/** Visibility is eventually consistent: asks again until the answer fits, for at most `timeoutMs`. */
async function until<T>(ask: () => Promise<T>, fits: (answer: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await ask();
    if (fits(answer) || Date.now() > deadline) return answer;
    await new Promise((wake) => setTimeout(wake, 250));
  }
}

const ids = (rows: Row[]) => rows.map((row) => row.messageId).sort();

describe('GET /admin/deliveries', () => {
  let sourceA: string;
  let destinationA: string;
  let sourceB: string;
  let startedAt: string;

  beforeAll(async () => {
    startedAt = new Date(Date.now() - 1_000).toISOString();
    const a = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const b = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    sourceA = a.source.id;
    destinationA = a.destination.id;
    sourceB = b.source.id;
    await send(system.app, a.writeKey, 'track', { messageId: 'list-1', userId: 'u-list', event: 'Listed' });
    await send(system.app, a.writeKey, 'identify', { messageId: 'list-2', userId: "o'brien", traits: {} });
    await send(system.app, b.writeKey, 'page', { messageId: 'list-3', userId: 'u-list', name: 'Home' });
    for (const [source, messageId] of [[sourceA, 'list-1'], [sourceA, 'list-2'], [sourceB, 'list-3']]) {
      expect(await deliveryResult(system.client, source, messageId)).toMatchObject({ ok: true });
    }
    // Each has its final status in visibility before the filters are asked.
    await until(
      () => list({ sourceId: sourceA, status: 'delivered' }),
      (r) => r.body.deliveries.length === 2,
    );
    await until(
      () => list({ sourceId: sourceB, status: 'delivered' }),
      (r) => r.body.deliveries.length === 1,
    );
  });

  it('lists a source\'s deliveries with their fields, and filters by source, destination, type, status and userId', async () => {
    const bySource = await list({ sourceId: sourceA });
    expect(bySource.status).toBe(200);
    expect(ids(bySource.body.deliveries)).toEqual(['list-1', 'list-2']);
    const row = bySource.body.deliveries.find((r) => r.messageId === 'list-1')!;
    expect(row).toMatchObject({ sourceId: sourceA, type: 'track', status: 'delivered', workflowId: deliveryWorkflowId(sourceA, 'list-1') });
    // Crypto-shredding changed this rule: visibility holds only the userId's keyed hash, so a row shows the
    // userId when the filter names it (and the detail, from the decoded input), never the hash.
    expect(row.userId).toBeUndefined();
    expect((await list({ userId: 'u-list', sourceId: sourceA })).body.deliveries).toEqual([expect.objectContaining({ messageId: 'list-1', userId: 'u-list' })]);
    expect(Date.parse(row.startedAt)).toBeLessThanOrEqual(Date.parse(row.closedAt!));
    expect(row.runId).toMatch(/^[0-9a-f-]{36}$/);

    expect(ids((await list({ destinationId: destinationA })).body.deliveries)).toEqual(['list-1', 'list-2']);
    expect(ids((await list({ sourceId: sourceA, type: 'identify' })).body.deliveries)).toEqual(['list-2']);
    expect(ids((await list({ userId: 'u-list', sourceId: sourceB })).body.deliveries)).toEqual(['list-3']);
    expect((await list({ sourceId: sourceA, status: 'failed' })).body.deliveries).toEqual([]);
    expect((await list({ sourceId: sourceA, status: 'retrying' })).body.deliveries).toEqual([]);
  });

  // Crypto-shredding changed this rule: visibility holds keyed hashes, so a double quote or a backslash,
  // refused before, is now searchable like any other character.
  it('takes a userId as a value, never as query text: any id, quotes, backslashes and non-ASCII included, is found by its keyed hash', async () => {
    expect(ids((await list({ userId: "o'brien" })).body.deliveries)).toEqual(['list-2']);
    // Would match every delivery if the quote ended the literal: it matches none.
    const injected = await list({ userId: 'x" OR WorkflowType = "deliverMessage' });
    expect(injected.status).toBe(200);
    expect(injected.body.deliveries).toEqual([]);

    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const odd = ['a\\b', 'q"uote', 'zoë 🦊 ü'];
    for (const [i, userId] of odd.entries()) await send(system.app, writeKey, 'track', { messageId: `odd-${i}`, userId, event: 'Odd' });
    for (const [i, userId] of odd.entries()) {
      const found = await until(() => list({ userId, sourceId: source.id }), (r) => r.body.deliveries.length === 1);
      // The row shows the real userId (from the memo), not the hash visibility holds.
      expect(found.body.deliveries).toEqual([expect.objectContaining({ messageId: `odd-${i}`, userId })]);
    }
  });

  it('filters by start time with since and until', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(ids((await list({ sourceId: sourceA, since: startedAt })).body.deliveries)).toEqual(['list-1', 'list-2']);
    expect((await list({ sourceId: sourceA, since: future })).body.deliveries).toEqual([]);
    expect((await list({ sourceId: sourceA, until: startedAt })).body.deliveries).toEqual([]);
    expect(ids((await list({ sourceId: sourceA, since: startedAt, until: future })).body.deliveries)).toEqual(['list-1', 'list-2']);
  });

  /** Every page of a listing, following nextCursor; at most `maxPages`. */
  async function allPages(query: Record<string, string>, between: (page: number) => Promise<void> = async () => {}, maxPages = 20) {
    const pages: Row[][] = [];
    let cursor: string | undefined;
    do {
      const page = await list({ ...query, ...(cursor && { cursor }) });
      expect(page.status).toBe(200);
      expect(page.body.deliveries.length).toBeLessThanOrEqual(Number(query.limit));
      pages.push(page.body.deliveries);
      cursor = page.body.nextCursor;
      if (cursor) await between(pages.length);
    } while (cursor && pages.length < maxPages);
    return pages;
  }

  it('pages with limit and cursor, each delivery once', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const sent = ['page-1', 'page-2', 'page-3', 'page-4', 'page-5'];
    for (const messageId of sent) await send(system.app, writeKey, 'track', { messageId, userId: 'u-page', event: 'Paged' });
    await until(
      () => list({ sourceId: source.id, status: 'delivered', limit: '500' }),
      (r) => r.body.deliveries.length === sent.length,
    );
    const pages = await allPages({ sourceId: source.id, limit: '2' });
    expect(pages.flat().map((row) => row.messageId).sort()).toEqual(sent);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    // Only the last page may be short: a client may stop at the first one.
    expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
  });

  it('skips no delivery that finishes while a client pages, and lists none started after the first page', async () => {
    // Temporal orders a list by close time, running runs first: a run that closes between pages
    // moves. Five deliveries are retrying at the first page and all delivered by the second.
    let answer = 503;
    const flipping = await startReceiver(() => ({ status: answer }));
    others.push(flipping);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: flipping.url, headers: {} }] });
    const sent = ['moving-1', 'moving-2', 'moving-3', 'moving-4', 'moving-5'];
    for (const messageId of sent) await send(system.app, writeKey, 'track', { messageId, userId: 'u-moving', event: 'Moving' });
    await until(
      () => list({ sourceId: source.id, status: 'retrying', limit: '500' }),
      (r) => r.body.deliveries.length === sent.length,
    );

    const pages = await allPages({ sourceId: source.id, limit: '2' }, async (page) => {
      if (page !== 1) return;
      answer = 200;
      await send(system.app, writeKey, 'track', { messageId: 'moving-late', userId: 'u-moving', event: 'Late' });
      await until(
        () => list({ sourceId: source.id, status: 'delivered', limit: '500' }),
        (r) => r.body.deliveries.length === sent.length + 1,
        60_000,
      );
    });

    const rows = pages.flat();
    expect([...new Set(rows.map((row) => row.messageId))].sort()).toEqual(sent);
    expect(pages[0].every((row) => row.status === 'retrying')).toBe(true);
    // A delivery shows twice only when it finished in between: first retrying, then delivered.
    const repeated = rows.filter((row, i) => rows.findIndex((other) => other.messageId === row.messageId) !== i);
    for (const again of repeated) {
      expect(again.status).toBe('delivered');
      expect(pages[0].map((row) => row.messageId)).toContain(again.messageId);
    }
    // A fresh listing has the late one too, and each once.
    const fresh = (await allPages({ sourceId: source.id, limit: '2' })).flat();
    expect(fresh.map((row) => row.messageId).sort()).toEqual([...sent, 'moving-late'].sort());
  });

  it('status failed finds a delivery every webhook refused, and stopped one that was terminated', async () => {
    const refusing = await startReceiver(() => ({ status: 400 }));
    const hanging = await startReceiver(() => ({ status: 503 }));
    others.push(refusing, hanging);
    const refused = await sourceWithDestination(system.store, { webhooks: [{ url: refusing.url, headers: {} }] });
    const stopped = await sourceWithDestination(system.store, { webhooks: [{ url: hanging.url, headers: {} }] });
    await send(system.app, refused.writeKey, 'track', { messageId: 'status-failed', userId: 'u-status', event: 'Refused' });
    await send(system.app, stopped.writeKey, 'track', { messageId: 'status-stopped', userId: 'u-status', event: 'Stopped' });
    expect(await deliveryResult(system.client, refused.source.id, 'status-failed')).toMatchObject({ ok: false });
    await hanging.waitForRequests(1);
    await system.client.workflow.getHandle(deliveryWorkflowId(stopped.source.id, 'status-stopped')).terminate('test: stopped by an operator');

    const failed = await until(
      () => list({ sourceId: refused.source.id, status: 'failed' }),
      (r) => r.body.deliveries.length === 1,
    );
    expect(failed.body.deliveries).toEqual([expect.objectContaining({ messageId: 'status-failed', status: 'failed' })]);
    const terminated = await until(
      () => list({ sourceId: stopped.source.id, status: 'stopped' }),
      (r) => r.body.deliveries.length === 1,
    );
    expect(terminated.body.deliveries).toEqual([expect.objectContaining({ messageId: 'status-stopped', status: 'stopped' })]);
    expect((await list({ sourceId: stopped.source.id, status: 'delivering' })).body.deliveries).toEqual([]);
  });

  it.each([
    [{ limit: '501' }, 'limit: must be from 1 to 500'],
    [{ limit: '0' }, 'limit: must be from 1 to 500'],
    [{ limit: 'ten' }, 'limit: must match pattern'],
    [{ status: 'lost' }, 'status: must be equal to one of the allowed values'],
    [{ type: 'click' }, 'type: must be equal to one of the allowed values'],
    [{ sourceId: 'src_x" OR "a" = "a' }, 'sourceId: must match pattern'],
    [{ destinationId: 'dst_1' }, 'destinationId: must match pattern'],
    [{ since: 'yesterday' }, 'since: must match format "date-time"'],
    [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'until: must be later than since'],
    [{ cursor: 'not a cursor!' }, 'cursor: must match pattern'],
    [{ cursor: 'bm90LWEtdG9rZW4' }, 'cursor: is not a nextCursor this API returned'],
    [{ cursor: Buffer.from(JSON.stringify({ query: 'WorkflowType = "deliverMessage"', at: '2026-01-01T00:00:00Z', phase: 'running' })).toString('base64url'), sourceId: 'src_00000000000000000000000000000000' }, 'cursor: is not a nextCursor this API returned'],
    [{ colour: 'red' }, 'colour: is not a known field'],
  ])('answers 400 naming the field and the rule for %j', async (query, message) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_request' });
    expect(response.body.message).toContain(message);
  });

  it('needs the admin token', async () => {
    const response = await system.app.inject({ method: 'GET', url: '/admin/deliveries' });
    expect(response.statusCode).toBe(401);
  });
});

describe('a delivery that succeeded writes no last status: its completed run says delivered', () => {
  /** Each event's kind, from the one `…EventAttributes` field it carries. */
  const kinds = (history: temporal.api.history.v1.IHistory) =>
    (history.events ?? []).map((event) => Object.keys(event).find((key) => key.endsWith('EventAttributes') && event[key as keyof typeof event])?.replace(/EventAttributes$/, ''));

  it('first try: 6 history events, no search-attribute upsert after the start; listed and shown as delivered, never as delivering', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    // The worker defers a local first attempt to a webhook it has not yet seen answer (a regular
    // activity instead): the first message makes this one known, the second is the common case.
    for (const messageId of ['implied-0', 'implied-1']) {
      await send(system.app, writeKey, 'track', { messageId, userId: 'u-implied', event: 'Implied' });
      expect(await deliveryResult(system.client, source.id, messageId)).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 1 }] } });
    }

    const handle = system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'implied-1'));
    expect(kinds(await handle.fetchHistory())).toEqual(['workflowExecutionStarted', 'workflowTaskScheduled', 'workflowTaskStarted', 'workflowTaskCompleted', 'markerRecorded', 'workflowExecutionCompleted']);
    expect((await handle.describe()).typedSearchAttributes.get(STATUS)).toBe('delivering');

    const delivered = ['implied-0 delivered', 'implied-1 delivered'];
    const rows = (r: Awaited<ReturnType<typeof list>>) => r.body.deliveries.map((row) => `${row.messageId} ${row.status}`).sort();
    expect(rows(await until(() => list({ sourceId: source.id, status: 'delivered' }), (r) => r.body.deliveries.length === 2))).toEqual(delivered);
    expect(rows(await list({ sourceId: source.id }))).toEqual(delivered);
    expect((await list({ sourceId: source.id, status: 'delivering' })).body.deliveries).toEqual([]);
    expect(((await detail(source.id, 'implied-1')).json<Detail>())).toMatchObject({ status: 'delivered', destinations: [{ status: 'delivered' }] });
  });

  it('after a retry round: SwitchyardStatus stays retrying, and the API lists and shows it delivered, never retrying', async () => {
    const flaky = await startReceiver((_request, n) => ({ status: n === 0 ? 503 : 200 }));
    others.push(flaky);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: flaky.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'implied-2', userId: 'u-implied', event: 'Retried' });
    expect(await deliveryResult(system.client, source.id, 'implied-2')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', rounds: 2 }] } });

    const handle = system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'implied-2'));
    // The one upsert is the round's `retrying`; none follows the last attempt.
    const history = kinds(await handle.fetchHistory());
    expect(history.filter((kind) => kind === 'upsertWorkflowSearchAttributes')).toHaveLength(1);
    expect(history.slice(history.lastIndexOf('activityTaskCompleted'))).toEqual(['activityTaskCompleted', 'workflowTaskScheduled', 'workflowTaskStarted', 'workflowTaskCompleted', 'workflowExecutionCompleted']);
    expect((await handle.describe()).typedSearchAttributes.get(STATUS)).toBe('retrying');

    const listed = await until(
      () => list({ sourceId: source.id, status: 'delivered' }),
      (r) => r.body.deliveries.length === 1,
    );
    expect(listed.body.deliveries).toEqual([expect.objectContaining({ messageId: 'implied-2', status: 'delivered' })]);
    expect((await list({ sourceId: source.id, status: 'retrying' })).body.deliveries).toEqual([]);
    expect(((await detail(source.id, 'implied-2')).json<Detail>())).toMatchObject({ status: 'delivered' });
  });
});

interface Detail {
  messageId: string;
  status: string;
  runId: string;
  workflowId: string;
  redelivery?: { requestedAt: string; previousRunId: string };
  message: Record<string, unknown>;
  destinations: { destinationId: string; status?: string; reason?: string; attempts: Record<string, unknown>[] }[];
}

const detail = (sourceId: string, messageId: string) =>
  system.app.inject({ method: 'GET', url: `/admin/sources/${sourceId}/deliveries/${encodeURIComponent(messageId)}`, headers: auth });
const redeliver = (sourceId: string, messageId: string) =>
  system.app.inject({ method: 'POST', url: `/admin/sources/${sourceId}/deliveries/${encodeURIComponent(messageId)}/redeliver`, headers: auth });

describe('GET /admin/sources/:sourceId/deliveries/:messageId', () => {
  it('shows the message and each attempt in order: a 503, then the retry round that succeeded; no secret, header value or query', async () => {
    const flaky = await startReceiver((_request, n) => ({ status: n === 0 ? 503 : 200 }));
    others.push(flaky);
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      sharedSecret: 'detail-shared-s3cret',
      webhooks: [{ url: `${flaky.url}?token=query-s3cret`, headers: { authorization: 'Bearer header-s3cret' } }],
    });
    await send(system.app, writeKey, 'track', { messageId: 'detail-1', userId: 'u-detail', event: 'Detailed', properties: { plan: 'pro' } });
    expect(await deliveryResult(system.client, source.id, 'detail-1')).toMatchObject({ ok: true });

    const response = await detail(source.id, 'detail-1');
    expect(response.statusCode).toBe(200);
    const body = response.json<Detail>();
    expect(body).toMatchObject({ messageId: 'detail-1', status: 'delivered', workflowId: deliveryWorkflowId(source.id, 'detail-1') });
    expect(body.message).toMatchObject({ type: 'track', event: 'Detailed', messageId: 'detail-1', properties: { plan: 'pro' } });
    expect(body.destinations).toHaveLength(1);
    expect(body.destinations[0]).toMatchObject({ destinationId: destination.id, status: 'delivered' });
    expect(body.destinations[0].attempts).toEqual([
      expect.objectContaining({ webhookIndex: 0, url: flaky.url, round: 1, httpStatus: 503, error: 'HTTP 503', outcome: 'retry' }),
      expect.objectContaining({ webhookIndex: 0, url: flaky.url, round: 2, httpStatus: 200, outcome: 'success' }),
    ]);
    for (const attempt of body.destinations[0].attempts) {
      expect(Date.parse(attempt.startedAt as string)).not.toBeNaN();
      expect(attempt.durationMs).toEqual(expect.any(Number));
    }
    expect(Date.parse(body.destinations[0].attempts[0].startedAt as string)).toBeLessThanOrEqual(Date.parse(body.destinations[0].attempts[1].startedAt as string));
    for (const secret of ['detail-shared-s3cret', 'header-s3cret', 'query-s3cret']) expect(response.body).not.toContain(secret);
  });

  it('keeps each destination\'s attempts apart when a message goes to two (first attempts as local activities)', async () => {
    const flaky = await startReceiver((_request, n) => ({ status: n === 0 ? 500 : 200 }));
    const steady = await startReceiver();
    others.push(flaky, steady);
    const { source, writeKey, destination: first } = await sourceWithDestination(system.store, { webhooks: [{ url: flaky.url, headers: {} }] });
    const second = await system.store.destinations.create(source.id, { enabled: true, webhooks: [{ url: steady.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'detail-2', userId: 'u-detail', event: 'Twice' });
    expect(await deliveryResult(system.client, source.id, 'detail-2')).toMatchObject({ ok: true });

    const body = (await detail(source.id, 'detail-2')).json<Detail>();
    const of = (id: string) => body.destinations.find((d) => d.destinationId === id)!;
    expect(of(first.id).attempts.map((a) => [a.url, a.round, a.httpStatus, a.outcome])).toEqual([
      [flaky.url, 1, 500, 'retry'],
      [flaky.url, 2, 200, 'success'],
    ]);
    expect(of(second.id).attempts.map((a) => [a.url, a.round, a.httpStatus, a.outcome])).toEqual([[steady.url, 1, 200, 'success']]);
  });

  it('answers 404 for a message it has no delivery of', async () => {
    const { source } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    const response = await detail(source.id, 'never-sent');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found' });
  });
});

describe('POST /admin/sources/:sourceId/deliveries/:messageId/redeliver', () => {
  it('delivers a delivered message again as a new run of the same workflow, marked a redelivery, and the list shows the new run', async () => {
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: receiver.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'again-1', userId: 'u-again', event: 'Again' });
    expect(await deliveryResult(system.client, source.id, 'again-1')).toMatchObject({ ok: true });
    const first = (await detail(source.id, 'again-1')).json<Detail>();

    const response = await redeliver(source.id, 'again-1');
    expect(response.statusCode).toBe(202);
    const started = response.json<{ messageId: string; workflowId: string; runId: string }>();
    expect(started).toEqual({ messageId: 'again-1', workflowId: deliveryWorkflowId(source.id, 'again-1'), runId: expect.any(String) });
    expect(started.runId).not.toBe(first.runId);

    expect(await deliveryResult(system.client, source.id, 'again-1')).toMatchObject({ ok: true });
    const received = receiver.requests.filter((r) => (JSON.parse(r.body) as { messageId?: string }).messageId === 'again-1');
    expect(received).toHaveLength(2);
    expect(received[1].body).toBe(received[0].body);

    // The new run's history says it is a redelivery: in its input and its static summary.
    const handle = system.client.workflow.getHandle(started.workflowId, started.runId);
    const history = await handle.fetchHistory();
    const input = await decodeFromPayloadsAtIndex<DeliveryInput>(system.client.options.loadedDataConverter, 0, history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads);
    expect(input.redelivery).toEqual({ requestedAt: expect.any(String), previousRunId: first.runId });
    // Neither event nor user: the body is sealed under the user's data key (crypto-shredding), and a summary copy would outlive its erasure.
    expect(await (await handle.describe()).staticSummary()).toBe('redelivery · track · sealed → 1 destination');
    expect(((await detail(source.id, 'again-1')).json<Detail>())).toMatchObject({ runId: started.runId, status: 'delivered', redelivery: { previousRunId: first.runId } });

    const listed = await until(
      () => list({ sourceId: source.id }),
      (r) => r.body.deliveries.some((row) => row.runId === started.runId && row.status === 'delivered'),
    );
    expect(listed.body.deliveries.map((row) => [row.messageId, row.runId, row.status])).toContainEqual(['again-1', started.runId, 'delivered']);
  });

  it('answers 409 while the delivery is still under way, and 404 for an unknown message', async () => {
    const failing = await startReceiver(() => ({ status: 503 }));
    others.push(failing);
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: failing.url, headers: {} }] });
    await send(system.app, writeKey, 'track', { messageId: 'busy-1', userId: 'u-busy', event: 'Busy' });
    await failing.waitForRequests(1);
    const response = await redeliver(source.id, 'busy-1');
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: 'conflict' });
    expect((await redeliver(source.id, 'never-sent')).statusCode).toBe(404);
    // Not left retrying for the rest of the run.
    await system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'busy-1')).terminate('test done');
  });
});

it('the three routes are in the API document, with the admin Bearer token', async () => {
  const document = (await system.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, { security?: unknown; parameters?: { name: string }[] }>> }>();
  expect(document.paths['/admin/deliveries'].get.security).toEqual([{ adminToken: [] }]);
  expect(document.paths['/admin/deliveries'].get.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['sourceId', 'status', 'since', 'limit', 'cursor']));
  expect(document.paths['/admin/sources/{sourceId}/deliveries/{messageId}'].get.security).toEqual([{ adminToken: [] }]);
  expect(document.paths['/admin/sources/{sourceId}/deliveries/{messageId}/redeliver'].post.security).toEqual([{ adminToken: [] }]);
});
