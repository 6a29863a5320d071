import type { Payload } from '@temporalio/common';
import { decodeOptionalSinglePayload } from '@temporalio/common/lib/internal-non-workflow';
import { deliveryWorkflowId } from '../../src/delivery/ids';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { deliveryResult, send, sourceWithDestination, type TestSystem, useSystem } from '../helpers/system';

/**
 * The Temporal Web UI reads a delivery without opening its input: the workflow's static summary and
 * details, and each attempt's summary, are user metadata on the start request and on the attempt's
 * command. They name a user and an event, so they are encrypted like every payload: read
 * here through the client's codec, as the UI reads them through the codec server.
 */
let system: TestSystem;
let failing: Receiver;
let working: Receiver;
const others: Receiver[] = [];
useSystem(
  (s, r) => {
    system = s;
    working = r;
  },
  { alsoClose: others },
);
beforeAll(async () => {
  failing = await startReceiver(() => ({ status: 503 }));
  others.push(failing);
});

const summaryOf = async (metadata: { summary?: Payload | null } | null | undefined): Promise<string | undefined> =>
  (await decodeOptionalSinglePayload<string>(system.client.options.loadedDataConverter, metadata?.summary)) ?? undefined;

describe('summaries in the Temporal Web UI', () => {
  it('a delivery shows "type · sealed → destinations" (its body sealed under the user\'s data key) and each attempt "POST webhook i <url>", with no query, properties or secrets', async () => {
    const { source, writeKey, destination } = await sourceWithDestination(system.store, {
      sharedSecret: 'summary-secret',
      webhooks: [
        { url: `${failing.url}?token=query-s3cret`, headers: { authorization: 'Bearer header-s3cret' } },
        { url: working.url, headers: {} },
      ],
    });
    await send(system.app, writeKey, 'track', { messageId: 'summary-1', userId: 'u1', event: 'Order Completed', properties: { email: 'private@example.com' } });
    expect(await deliveryResult(system.client, source.id, 'summary-1')).toMatchObject({ ok: true, report: { destinations: [{ status: 'delivered', webhookIndex: 1 }] } });

    const handle = system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'summary-1'));
    const description = await handle.describe();
    // Rule change (crypto-shredding): no event name or userId outside the user's data key.
    expect(await description.staticSummary()).toBe('track · sealed → 1 destination');
    expect(await description.staticDetails()).toBe(`source ${source.id}\nmessage summary-1\ndestinations ${destination.id}`);

    // Attempts as regular activities (ActivityTaskScheduled) and as the local first attempt (its
    // marker); a local attempt the worker defers to a regular activity shows the same summary twice.
    const history = await handle.fetchHistory();
    const attempts = await Promise.all(
      (history.events ?? [])
        .filter((event) => event.activityTaskScheduledEventAttributes || event.markerRecordedEventAttributes?.markerName === 'core_local_activity')
        .map((event) => summaryOf(event.userMetadata)),
    );
    expect([...new Set(attempts)]).toEqual([`POST webhook 0 ${failing.url}`, `POST webhook 1 ${working.url}`]);

    const shown = JSON.stringify([await description.staticSummary(), await description.staticDetails(), attempts]);
    for (const secret of ['query-s3cret', 'header-s3cret', 'summary-secret', 'private@example.com', 'Order Completed', '"u1']) expect(shown).not.toContain(secret);
  });

  it('a retry round says so in its attempt summary', async () => {
    const before = working.requests.length;
    working.respond((_request, n) => ({ status: n === before ? 503 : 200 }));
    const { source, writeKey } = await sourceWithDestination(system.store, { webhooks: [{ url: working.url, headers: {} }] });
    await send(system.app, writeKey, 'page', { messageId: 'summary-2', userId: 'u2', name: 'Pricing' });
    expect(await deliveryResult(system.client, source.id, 'summary-2')).toMatchObject({ ok: true });

    const handle = system.client.workflow.getHandle(deliveryWorkflowId(source.id, 'summary-2'));
    expect(await (await handle.describe()).staticSummary()).toBe('page · sealed → 1 destination');
    const history = await handle.fetchHistory();
    const attempts = (await Promise.all((history.events ?? []).map((event) => summaryOf(event.userMetadata)))).filter((summary) => summary?.startsWith('POST'));
    expect([...new Set(attempts)]).toEqual([`POST webhook 0 ${working.url}`, `POST webhook 0 ${working.url} · round 2`]);
  });
});
