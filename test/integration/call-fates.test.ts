import { archiveRetention } from '../../src/api/archive-retention';
import { readReplay, replayFinished, startReplay } from '../helpers/replay-api';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, deliveryResult, hasDeliveryWorkflow, send, startSystem, type TestSystem } from '../helpers/system';

/**
 * One fate per call (docs/privacy.md "What happens to a call: its fate"), read by every step of
 * ingestion and by regulations. Real API, real Temporal, the run's worker and store, real
 * receivers. Every source, plan, user and id is this file's own.
 */

let system: TestSystem;
const receivers: Receiver[] = [];
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  // Violations flushed every 200 ms: the violations route catches up fast.
  system = await startSystem({ healthFlushInterval: 200 });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await system.close();
});

const admin = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  system.app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

async function destinationTo(sourceId: string, consent?: { categories: string[]; whenAbsent: 'deliver' | 'drop' }) {
  const hook = await startReceiver();
  receivers.push(hook);
  const reply = await admin('POST', `/admin/sources/${sourceId}/destinations`, { enabled: true, webhooks: [{ url: hook.url }], ...(consent && { consent }) });
  expect(reply.statusCode).toBe(201);
  return { hook, id: reply.json<{ id: string }>().id };
}

const rule = (type: string, key: string | undefined, jsonSchema: Record<string, unknown>) => ({
  type,
  ...(key !== undefined && { key }),
  version: 1,
  jsonSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', labels: {}, ...jsonSchema },
});

/** Order Completed needs a string `order_id` when `required` says so. */
const orderCompleted = (required: string[]) => rule('TRACK', 'Order Completed', { properties: { properties: { type: 'object', properties: { order_id: { type: 'string' } }, required } } });
/** Every call must carry `context.app`. */
const commonNeedsApp = rule('COMMON', undefined, { properties: { context: { type: 'object', required: ['app'] } } });

async function planFor(sourceId: string, rules: unknown[], settings: Record<string, unknown>): Promise<string> {
  const created = await admin('POST', '/admin/tracking-plans', { name: `fates ${sourceId}` });
  const planId = created.json<{ id: string }>().id;
  expect((await admin('PUT', `/admin/tracking-plans/${planId}/rules`, { rules })).statusCode).toBe(200);
  expect((await admin('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId })).statusCode).toBe(201);
  expect((await admin('PATCH', `/admin/sources/${sourceId}/settings`, settings)).statusCode).toBe(200);
  return planId;
}

const bodies = (hook: Receiver) => hook.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
const consent = (categoryPreferences: Record<string, boolean>) => ({ consent: { categoryPreferences } });
const app = { app: { name: 'Shop', version: '1.0' } };

describe('a consent change is never swallowed by a plan', () => {
  it('delivers a Segment Consent Preference Updated the plan does not list and records it on the profile; a blocked identify still records its consent, not its traits', async () => {
    const { source, writeKey } = await system.store.sources.create('call fates: consent');
    await planFor(source.id, [orderCompleted([]), commonNeedsApp], { track: { allowUnplannedEvents: false }, identify: { commonEventOnViolations: 'BLOCK' } });
    const ads = await destinationTo(source.id, { categories: ['advertising'], whenAbsent: 'deliver' });
    const everyone = await destinationTo(source.id);
    const anHourAgo = Date.now() - 60 * 60_000;
    const at = (minutes: number) => new Date(anHourAgo + minutes * 60_000).toISOString();

    await send(system.app, writeKey, 'identify', { userId: 'cf-consent', messageId: 'cf-granted', traits: { plan: 'Premium' }, timestamp: at(0), context: { ...app, ...consent({ advertising: true }) } });
    expect(await deliveryResult(system.client, source.id, 'cf-granted')).toMatchObject({ ok: true });

    // The plan lists only Order Completed and blocks unplanned events: the withdrawal still goes out, to both.
    await send(system.app, writeKey, 'track', { userId: 'cf-consent', messageId: 'cf-withdrawn', event: 'Segment Consent Preference Updated', timestamp: at(1), context: { ...app, ...consent({ advertising: false }) } });
    expect(await deliveryResult(system.client, source.id, 'cf-withdrawn')).toMatchObject({ ok: true });
    for (const { hook } of [ads, everyone]) expect(bodies(hook).map((b) => b.messageId)).toEqual(['cf-granted', 'cf-withdrawn']);
    expect((await system.store.personas.profiles.get(source.id, 'cf-consent'))?.consent).toEqual({ categoryPreferences: { advertising: false }, timestamp: at(1) });
    // Its violation is still reported.
    await waitFor(async () => {
      const found = (await admin('GET', `/admin/sources/${source.id}/violations`)).json<{ violations: Array<Record<string, unknown>> }>().violations;
      expect(found).toContainEqual(expect.objectContaining({ violationType: 'Unplanned-Event', lastMessageId: 'cf-withdrawn' }));
    }, 10_000);

    // An identify without context.app is blocked by the COMMON rule: delivered nowhere, its traits
    // kept out of the profile, its consent recorded.
    await send(system.app, writeKey, 'identify', { userId: 'cf-consent', messageId: 'cf-blocked-identify', traits: { plan: 'Basic' }, timestamp: at(2), context: consent({ advertising: true, analytics: true }) });
    expect(await hasDeliveryWorkflow(system.client, source.id, 'cf-blocked-identify')).toBe(false);
    const profile = await system.store.personas.profiles.get(source.id, 'cf-consent');
    expect(profile?.consent).toEqual({ categoryPreferences: { advertising: true, analytics: true }, timestamp: at(2) });
    expect(profile?.traits).toEqual({ plan: 'Premium' });
  });
});

describe('a message recovered after a block counts as seen', () => {
  it('a DELETE regulation sends the deletion notice to the destinations that got the recovered message, and reaches the anonymousId it linked', async () => {
    const { source, writeKey } = await system.store.sources.create('call fates: recovered');
    const planId = await planFor(source.id, [orderCompleted(['order_id'])], { track: { allowEventOnViolations: false } });
    const first = await destinationTo(source.id);
    const second = await destinationTo(source.id);
    const since = new Date(Date.now() - 60_000).toISOString();

    // The user's only call is blocked: nothing reaches a destination yet.
    await send(system.app, writeKey, 'track', { userId: 'cf-recovered', anonymousId: 'cf-recovered-anon', messageId: 'cf-was-blocked', event: 'Order Completed', properties: { total: 4 } });
    expect(await hasDeliveryWorkflow(system.client, source.id, 'cf-was-blocked')).toBe(false);
    expect(await system.store.sourceUsers.linkedIds(['cf-recovered'])).toEqual(['cf-recovered-anon']);

    // The rule fixed, a blocked-only replay recovers it to both destinations.
    expect((await admin('PATCH', `/admin/tracking-plans/${planId}/rules`, { rules: [orderCompleted([])] })).statusCode).toBe(200);
    const replay = await startReplay(system, { sourceId: source.id, since, until: new Date(Date.now() + 1_000).toISOString(), blockedOnly: true });
    expect(await replayFinished(system, replay)).toMatchObject({ status: 'completed', started: 1, delivered: 1 });
    for (const { hook } of [first, second]) expect(bodies(hook).map((b) => b.messageId)).toEqual(['cf-was-blocked']);
    expect((await readReplay(system, replay)).skipped.blocked).toBe(0);

    const regulation = await admin('POST', '/admin/regulations', { regulationType: 'DELETE_ONLY', subjectType: 'USER_ID', subjectIds: ['cf-recovered'] });
    expect(regulation.statusCode).toBe(201);
    const createdAt = regulation.json<{ createdAt: string }>().createdAt;
    for (const { hook } of [first, second]) {
      await waitFor(() => expect(bodies(hook).filter((b) => b.type === 'delete')).toEqual([{ type: 'delete', userId: 'cf-recovered', timestamp: createdAt }]), 20_000);
    }
    // The anonymousId the blocked call linked is forgotten with the user.
    expect(await system.store.sourceUsers.linkedIds(['cf-recovered'])).toEqual([]);
    expect((await system.store.erasures.erasedAtOf(['cf-recovered-anon'])).has('cf-recovered-anon')).toBe(true);
  }, 180_000);
});

describe("a suppressed user's calls make nothing the plan derives", () => {
  it('records no violation for a suppressed user, while the same call of another user is recorded, its names shown only to payloads:read', async () => {
    const { source, writeKey } = await system.store.sources.create('call fates: suppressed');
    await planFor(source.id, [orderCompleted([])], { track: { allowUnplannedEvents: false } });
    await destinationTo(source.id);
    const suppress = await admin('POST', '/admin/regulations', { regulationType: 'SUPPRESS_ONLY', subjectType: 'USER_ID', subjectIds: ['cf-quiet'] });
    expect(suppress.statusCode).toBe(201);
    const batch = [
      { type: 'track', userId: 'cf-quiet', messageId: 'cf-quiet-1', event: 'Quiet Unplanned' },
      { type: 'track', userId: 'cf-loud', messageId: 'cf-loud-1', event: 'Loud Unplanned' },
    ];
    expect((await system.app.inject({ method: 'POST', url: '/v1/batch', headers: { authorization: basicAuth(writeKey) }, payload: { batch } })).statusCode).toBe(200);
    // Both calls were recorded by the same request, so once the other user's row is there, the suppressed one's would be too.
    const found = await waitFor(async () => {
      const rows = (await admin('GET', `/admin/sources/${source.id}/violations`)).json<{ violations: Array<Record<string, unknown>> }>().violations;
      expect(rows.length).toBeGreaterThan(0);
      return rows;
    }, 10_000);
    expect(found.map((v) => v.lastMessageId)).toEqual(['cf-loud-1']);

    // Names are user data: a read token gets what happened, without the event name, field or description.
    const mint = async (scopes: string[]) => (await admin('POST', '/admin/tokens', { name: `call fates violations ${scopes.join('+')}`, scopes })).json<{ token: string }>().token;
    const asToken = (token: string, query = '') => system.app.inject({ method: 'GET', url: `/admin/sources/${source.id}/violations${query}`, headers: { authorization: `Bearer ${token}` } });
    const reader = await mint(['read']);
    const readerReply = await asToken(reader);
    expect(readerReply.body).not.toContain('Loud Unplanned');
    expect(readerReply.json<{ violations: Array<Record<string, unknown>> }>().violations).toEqual([expect.objectContaining({ eventType: 'track', violationType: 'Unplanned-Event', count: 1, lastMessageId: 'cf-loud-1' })]);
    expect(Object.keys(readerReply.json<{ violations: Array<Record<string, unknown>> }>().violations[0])).not.toEqual(expect.arrayContaining(['eventName']));
    const filtered = await asToken(reader, '?eventName=Loud%20Unplanned');
    expect(filtered.statusCode).toBe(403);
    expect(filtered.json().message).toMatch(/^eventName: .*payloads:read/);
    const withPayloads = await asToken(await mint(['read', 'payloads:read']), '?eventName=Loud%20Unplanned');
    expect(withPayloads.json<{ violations: Array<Record<string, unknown>> }>().violations).toEqual([expect.objectContaining({ eventName: 'Loud Unplanned', field: 'event', description: 'event "Loud Unplanned" is not in the tracking plan' })]);
  });
});

describe('replays never undo omissions', () => {
  it("leaves out what the plan omitted at ingest after the plan is disconnected, and answers skipped.blocked only to payloads:read", async () => {
    const { source, writeKey } = await system.store.sources.create('call fates: replayed omissions');
    const planId = await planFor(source.id, [orderCompleted([])], { track: { allowUnplannedEventProperties: false } });
    const { hook, id: destinationId } = await destinationTo(source.id);
    const since = new Date(Date.now() - 60_000).toISOString();
    await send(system.app, writeKey, 'track', { userId: 'cf-omit', messageId: 'cf-omitted', event: 'Order Completed', properties: { order_id: 'o-1', coupon: 'CF-SECRET-7731' } });
    expect(await deliveryResult(system.client, source.id, 'cf-omitted')).toMatchObject({ ok: true });
    expect(bodies(hook)[0]).toMatchObject({ properties: { order_id: 'o-1' }, context: { protocols: { omitted: ['properties.coupon'] } } });

    // The plan disconnected: today nothing would omit the coupon, yet the replay leaves it out.
    expect((await admin('DELETE', `/admin/tracking-plans/${planId}/sources/${source.id}`)).statusCode).toBe(204);
    const until = new Date(Date.now() + 1_000).toISOString();
    const replay = await startReplay(system, { sourceId: source.id, destinationId, since, until });
    expect(await replayFinished(system, replay)).toMatchObject({ status: 'completed', started: 1, delivered: 1 });
    expect(hook.requests).toHaveLength(2);
    expect(hook.requests[1].body).not.toContain('CF-SECRET-7731');
    expect(bodies(hook)[1]).toMatchObject({ messageId: 'cf-omitted', properties: { order_id: 'o-1' }, context: { protocols: { omitted: ['properties.coupon'] } } });

    // A plan that blocks the event now: the dry run's blocked count is the plan's verdict on the archived body.
    const blocking = await planFor(source.id, [orderCompleted(['missing_field'])], { track: { allowEventOnViolations: false } });
    expect(blocking).toBeTruthy();
    const mint = async (scopes: string[]) => (await admin('POST', '/admin/tokens', { name: `call fates ${scopes.join('+')}`, scopes })).json<{ token: string }>().token;
    const dryRun = await startReplay(system, { sourceId: source.id, destinationId, since, until, dryRun: true });
    expect(await replayFinished(system, dryRun)).toMatchObject({ matched: 1, skipped: { blocked: 1, filtered: 0 } });
    const view = async (token: string) => (await system.app.inject({ method: 'GET', url: `/admin/replays/${dryRun}`, headers: { authorization: `Bearer ${token}` } })).json<{ skipped: Record<string, number> }>().skipped;
    expect(await view(await mint(['read']))).toEqual({ erased: 0, suppressed: 0, filtered: 1, duplicate: 0 });
    expect(await view(await mint(['read', 'payloads:read']))).toEqual({ erased: 0, suppressed: 0, filtered: 0, blocked: 1, duplicate: 0 });
  }, 180_000);
});

describe('what happened to one event: each call\'s decision per destination', () => {
  interface FateRow { messageId: string; destinationName: string; status: string; reason?: string; decision: string; event?: string; userId?: string }
  const fatesOf = async (query: string, token = ADMIN_TOKEN) => system.app.inject({ method: 'GET', url: `/admin/fates?${query}`, headers: { authorization: `Bearer ${token}` } });
  const rowsOf = async (query: string, token?: string) => (await fatesOf(query, token)).json<{ fates: FateRow[] }>().fates;
  const summary = (rows: FateRow[]) => rows.map((r) => `${r.messageId} ${r.destinationName} ${r.status} ${r.reason ?? ''}`.trim()).sort();

  it('shows delivered, blocked, consent-stopped, integrations-stopped and suppressed calls with their reason; ids and event names, and searching by them, only to payloads:read', async () => {
    const { source, writeKey } = await system.store.sources.create('call fates: what happened');
    await planFor(source.id, [orderCompleted([])], { track: { allowUnplannedEvents: false } });
    const named = async (name: string, extra: Record<string, unknown> = {}) => {
      const hook = await startReceiver();
      receivers.push(hook);
      const reply = await admin('POST', `/admin/sources/${source.id}/destinations`, { name, enabled: true, webhooks: [{ url: hook.url }], ...extra });
      expect(reply.statusCode).toBe(201);
      return reply;
    };
    const everyone = await named('Everyone hook');
    await named('Ads hook', { consent: { categories: ['advertising'], whenAbsent: 'deliver' } });
    const everyoneId = everyone.json<{ id: string }>().id;
    expect((await admin('POST', '/admin/regulations', { regulationType: 'SUPPRESS_ONLY', subjectType: 'USER_ID', subjectIds: ['cf-what-quiet'] })).statusCode).toBe(201);

    await send(system.app, writeKey, 'track', { userId: 'cf-what', messageId: 'cf-what-ordered', event: 'Order Completed', context: consent({ advertising: false }) });
    await send(system.app, writeKey, 'track', { userId: 'cf-what', messageId: 'cf-what-unplanned', event: 'Coupon Peeked' });
    await send(system.app, writeKey, 'track', { userId: 'cf-what', messageId: 'cf-what-off', event: 'Order Completed', integrations: { Webhooks: false } });
    await send(system.app, writeKey, 'track', { userId: 'cf-what-quiet', messageId: 'cf-what-suppressed', event: 'Order Completed' });
    expect(await deliveryResult(system.client, source.id, 'cf-what-ordered')).toMatchObject({ ok: true });

    const all = await rowsOf(`sourceId=${source.id}`);
    expect(summary(all)).toEqual([
      'cf-what-off Ads hook stopped integrations',
      'cf-what-off Everyone hook stopped integrations',
      'cf-what-ordered Ads hook stopped consent',
      'cf-what-ordered Everyone hook delivered',
      'cf-what-suppressed Ads hook stopped suppressed',
      'cf-what-suppressed Everyone hook stopped suppressed',
      'cf-what-unplanned Ads hook stopped plan',
      'cf-what-unplanned Everyone hook stopped plan',
    ]);
    // The admin token holds payloads:read: the user and the event of every kept call, never of a suppressed user's.
    expect(all.find((r) => r.messageId === 'cf-what-unplanned')).toMatchObject({ userId: 'cf-what', event: 'Coupon Peeked', decision: 'plan' });
    expect(all.filter((r) => r.messageId === 'cf-what-suppressed').map((r) => [r.userId, r.event])).toEqual([[undefined, undefined], [undefined, undefined]]);

    // Searched by user, event, destination, status and reason (newest first).
    expect(summary(await rowsOf(`userId=cf-what&event=Coupon%20Peeked`))).toEqual(['cf-what-unplanned Ads hook stopped plan', 'cf-what-unplanned Everyone hook stopped plan']);
    expect(await rowsOf('userId=cf-what-quiet')).toEqual([]);
    expect(summary(await rowsOf(`destinationId=${everyoneId}&status=sent`))).toEqual(['cf-what-ordered Everyone hook delivered']);
    expect(summary(await rowsOf(`sourceId=${source.id}&reason=consent`))).toEqual(['cf-what-ordered Ads hook stopped consent']);
    const paged = (await fatesOf(`sourceId=${source.id}&limit=5`)).json<{ fates: FateRow[]; nextCursor: string }>();
    const rest = await rowsOf(`sourceId=${source.id}&limit=5&cursor=${paged.nextCursor}`);
    expect(summary([...paged.fates, ...rest])).toEqual(summary(all));

    // A read token sees what happened, not whose event it was, and may not ask whether anything matches a user or an event.
    const reader = (await admin('POST', '/admin/tokens', { name: 'call fates what happened', scopes: ['read'] })).json<{ token: string }>().token;
    const seen = await fatesOf(`sourceId=${source.id}`, reader);
    expect(summary(seen.json<{ fates: FateRow[] }>().fates)).toEqual(summary(all));
    expect(seen.body).not.toMatch(/cf-what"|Coupon Peeked|Order Completed/);
    for (const [query, field] of [['userId=cf-what', 'userId'], ['event=Coupon%20Peeked', 'event']]) {
      const refused = await fatesOf(query, reader);
      expect([refused.statusCode, refused.json().message]).toEqual([403, expect.stringMatching(new RegExp(`^${field}: .*payloads:read`))]);
    }

    // The same holds for the delivery workflows' list.
    const byUser = await system.app.inject({ method: 'GET', url: '/admin/deliveries?userId=cf-what', headers: { authorization: `Bearer ${reader}` } });
    expect([byUser.statusCode, byUser.json().message]).toEqual([403, expect.stringMatching(/^userId: .*payloads:read/)]);

    // Bad filters: 400 naming the field.
    for (const [query, field] of [['reason=bored', 'reason'], ['status=sent&reason=plan', 'reason'], ['limit=0', 'limit'], ['cursor=bm9wZQ', 'cursor'], ['since=yesterday', 'since'], ['destinationId=dst_1', 'destinationId']]) {
      const refused = await fatesOf(query);
      expect([query, refused.statusCode, refused.json().message]).toEqual([query, 400, expect.stringContaining(field)]);
    }

    // A DELETE regulation takes the user's rows with it.
    expect((await admin('POST', '/admin/regulations', { regulationType: 'DELETE_ONLY', subjectType: 'USER_ID', subjectIds: ['cf-what'] })).statusCode).toBe(201);
    await waitFor(async () => expect(await rowsOf(`sourceId=${source.id}&limit=100`)).toHaveLength(2), 20_000);

    // Kept ARCHIVE_RETENTION, as the calls: a 7-day sweep eight days on takes the rest (this file's archive left alone).
    const untouched = { prepare: async () => undefined, prune: async () => ({ deleted: 0, droppedPartitions: [] }) };
    const eightDaysOn = archiveRetention(untouched, 7 * 86_400_000, undefined, () => Date.now() + 8 * 86_400_000, system.store.fates);
    eightDaysOn.start();
    await eightDaysOn.stop();
    expect(await rowsOf(`sourceId=${source.id}&limit=100`)).toEqual([]);
  }, 120_000);
});
