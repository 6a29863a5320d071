import path from 'node:path';
import fc from 'fast-check';
import { openStore, type Store } from '../../src/store';
import { faultDir, startOwnApi, stopProcess, type OwnApi } from '../helpers/faults';
import { createTestDatabase } from '../helpers/postgres';
import { ADMIN_TOKEN, basicAuth } from '../helpers/system';

/**
 * No program a user saves, and no call a sender sends through it, ends the process or stalls it:
 * against a real API process (src/server.ts) on PostgreSQL, with the run's real Temporal behind
 * ingestion. Each crash shape an outside review found is planted twice: through the admin API
 * (refused at save, naming the rule and keyword) and straight into the store, as an older version
 * might have saved it (read at ingest, skipped and logged). Then a property test saves hostile
 * programs in every language (JSON Schema, FQL, RE2 patterns, mapping directives and Liquid
 * templates) and sends events through them. FC_SEED replays it; the seed is printed.
 */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4242 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 30);
/** A call that takes longer than this has stalled: the property fails on it (a stall guard, not a speed target). */
const STALLED_MS = 20_000;

let api: OwnApi;
let store: Store;
let writeKey: string;
let sourceId: string;
let planId: string;
let filteredDestination: string;
let actionsDestination: string;

const asAdmin = `Bearer ${ADMIN_TOKEN}`;

async function call(method: string, url: string, payload?: unknown, authorization = asAdmin): Promise<{ status: number; json: any }> {
  const response = await fetch(`${api.url}${url}`, {
    method,
    headers: { authorization, ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { body: JSON.stringify(payload) }),
    signal: AbortSignal.timeout(STALLED_MS),
  });
  const body = await response.text();
  return { status: response.status, json: body ? JSON.parse(body) : undefined };
}

const track = (event: Record<string, unknown>, route = 'track') => call('POST', `/v1/${route}`, { userId: 'u', ...event }, basicAuth(writeKey));

/** The process still serves: ingestion answers, /health is 200, and it has not exited. */
async function stillServing(): Promise<void> {
  expect(api.process.exitCode).toBeNull();
  expect((await track({ event: 'Order Completed', properties: { total: 1 } })).status).toBe(200);
  expect((await call('GET', '/health')).status).toBe(200);
}

beforeAll(async () => {
  console.log(`user-programs integration property: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
  const url = await createTestDatabase('user_programs');
  api = await startOwnApi({ ...process.env, DATABASE_URL: url, ADMIN_TOKEN, LOG_FORMAT: 'json', INGEST_RATE_LIMIT: '0' }, path.join(faultDir('user-programs'), 'api.log'));
  store = await openStore({ databaseUrl: url, databasePath: '' });
  const source = await call('POST', '/admin/sources', { name: 'Shop' });
  expect(source.status).toBe(201);
  ({ writeKey, id: sourceId } = source.json);
  const plan = await call('POST', '/admin/tracking-plans', { name: 'Shop plan' });
  planId = plan.json.id;
  expect((await call('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId })).status).toBe(201);
  // Blocking on: the review's crash needed an invalid event under `allowEventOnViolations: false`.
  expect((await call('PATCH', `/admin/sources/${sourceId}/settings`, { track: { allowEventOnViolations: false } })).status).toBe(200);
  // Switched off: what must keep working is ingestion and the saves, not a delivery.
  const webhook = await call('POST', `/admin/sources/${sourceId}/destinations`, { name: 'Filtered', enabled: false, webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }] });
  expect(webhook.status).toBe(201);
  filteredDestination = webhook.json.id;
  const actions = await call('POST', `/admin/sources/${sourceId}/destinations`, { type: 'actions', name: 'Mapped', enabled: false, mappings: [mapping({ '@path': '$.event' })] });
  expect(actions.status).toBe(201);
  actionsDestination = actions.json.id;
}, 180_000);

afterAll(async () => {
  await store?.close();
  await stopProcess(api?.process);
});

function mapping(data: unknown, trigger = 'type = "track"') {
  return { name: 'Mapped', enabled: true, trigger, settings: { url: 'https://hooks.example.com/m', method: 'POST', data: { value: data } } };
}

const planned = (properties: Record<string, unknown>) => ({ properties: { properties: { properties } } });
const chain = (levels: number) => {
  const definitions: Record<string, unknown> = { [`d${levels}`]: { type: 'string' } };
  for (let i = 0; i < levels; i++) definitions[`d${i}`] = { allOf: [{ $ref: `#/definitions/d${i + 1}` }, { $ref: `#/definitions/d${i + 1}` }] };
  return { definitions, ...planned({ total: { $ref: '#/definitions/d0' } }) };
};

/** Each crash shape: the rule, and the field and words its refusal names. */
const CRASH_SHAPES: Array<[string, { type: string; key?: string; jsonSchema: Record<string, unknown> }, string]> = [
  ['an async validator', { type: 'TRACK', key: 'Order Completed', jsonSchema: { $async: true, ...planned({ total: { type: 'number' } }) } }, 'rules[0].jsonSchema/$async: (TRACK "Order Completed" version 1) `$async` is not allowed'],
  ['a meta-schema $id', { type: 'COMMON', jsonSchema: { $id: 'http://json-schema.org/draft-07/schema#' } }, 'rules[0].jsonSchema/$id: (COMMON version 1) `$id` must not name a JSON Schema meta-schema'],
  ['a recursion through $ref "#"', { type: 'COMMON', jsonSchema: { allOf: [{ $ref: '#' }] } }, 'rules[0].jsonSchema/allOf/0/$ref: (COMMON version 1) `$ref` must point inside the rule'],
  ['a $ref loop', { type: 'TRACK', key: 'Order Completed', jsonSchema: { definitions: { loop: { allOf: [{ $ref: '#/definitions/loop' }] } }, ...planned({ total: { $ref: '#/definitions/loop' } }) } }, 'rules[0].jsonSchema/definitions/loop/allOf/0/$ref: (TRACK "Order Completed" version 1) `$ref` cycle'],
  ['a reference chain that doubles 28 times', { type: 'TRACK', key: 'Order Completed', jsonSchema: chain(28) }, 'rules[0].jsonSchema: (TRACK "Order Completed" version 1) expands to more than 10000 schema nodes'],
  ['a quadratic format', { type: 'TRACK', key: 'Order Completed', jsonSchema: planned({ total: { format: 'url' } }) }, 'rules[0].jsonSchema/properties/properties/properties/total/format: (TRACK "Order Completed" version 1) format "url" is not one'],
];

/** Events that met each crash shape: invalid ones (the async rejection), and values past every bound. */
const HOSTILE_EVENTS: Array<[string, Record<string, unknown>]> = [
  ['track', { event: 'Order Completed', properties: { total: 'not a number' } }],
  ['track', { event: 'Order Completed', properties: { total: `http://${':'.repeat(20_000)}!` } }],
  ['identify', { traits: { a: 1 } }],
  ['page', { name: 'Home', properties: { a: 1 } }],
];

describe('each known crash shape', () => {
  it.each(CRASH_SHAPES)('%s is refused at save naming the rule and keyword, and the process keeps serving', async (_, rule, refusal) => {
    const put = await call('PUT', `/admin/tracking-plans/${planId}/rules`, { rules: [{ ...rule, version: 1 }] });
    expect(put.status).toBe(400);
    expect(put.json.message).toContain(refusal);
    // A refused save changes no shared state: a good draft-07 rule saves and blocks after it, on this process.
    expect((await call('PUT', `/admin/tracking-plans/${planId}/rules`, { rules: [{ type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema: { $schema: 'http://json-schema.org/draft-07/schema#', ...planned({ total: { type: 'number' } }) } }] })).status).toBe(200);
    const blocked = await track({ event: 'Order Completed', properties: { total: 'x' } });
    expect(blocked.status).toBe(200);
    await stillServing();
  });

  it('planted in the store as an older version might have saved them, every shape is skipped at ingest, and the process keeps serving', async () => {
    const planted = CRASH_SHAPES.map(([, rule], i) => ({ ...rule, key: rule.key === undefined ? undefined : `${rule.key}`, version: i + 1 }));
    expect(await store.trackingPlans.replaceRules(planId, planted as never)).toBe(true);
    for (const [route, event] of HOSTILE_EVENTS) expect([route, (await track(event, route)).status]).toEqual([route, 200]);
    await stillServing();
    // The real fix held: nothing reached the process-level safety net.
    const metrics = await fetch(`${api.url}/metrics`).then((res) => res.text());
    expect(metrics).not.toMatch(/^switchyard_stray_errors_total\{[^}]*\} [1-9]/m);
  });
});

// Hostile programs in every language, each a small mix of the shapes that broke something once.
const schemaLeaf = fc.constantFrom<Record<string, unknown>>(
  { $async: true },
  { $ref: '#' },
  { $ref: '#/definitions/a' },
  { $ref: 'https://evil.example/s.json' },
  { $id: 'http://json-schema.org/draft-07/schema#' },
  { $id: 'https://schemas.example.com/x.json' },
  { $anchor: 'x' },
  { format: 'url' },
  { format: 'email' },
  { format: 'uri' },
  { format: 'date-time' },
  { pattern: '^(a+)+$' },
  { pattern: '(?!x)' },
  { pattern: 'a[ab]{1000}$' },
  { pattern: 'a[ab]{20}$' },
  { uniqueItems: true },
  { type: 'array', items: { type: 'object' } },
  { requird: ['x'] },
  { maxLength: 4 },
  { type: 'number' },
);
const schemaNode: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ node: Record<string, unknown> }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    schemaLeaf,
    fc.record({ allOf: fc.array(tie('node'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ definitions: fc.record({ a: tie('node') }), properties: fc.record({ x: fc.constant({ $ref: '#/definitions/a' }) }) }),
    fc.record({ items: tie('node') }),
  ),
})).node;
const hostileRule = fc.record({
  type: fc.constantFrom('TRACK', 'COMMON'),
  jsonSchema: fc.oneof(schemaNode, schemaNode.map((node) => planned({ 'card.number': node, 'a/b': node, total: node }))),
});
const fqlToken = fc.constantFrom('event', 'properties.total', 'properties.card.number', '=', '!=', '<', '(', ')', '!', 'and', 'or', '"x"', "'*a*'", '5', 'match(', 'contains(', 'length(', ',', 'typeof(', 'all', '__proto__');
const hostileFql = fc.array(fqlToken, { minLength: 1, maxLength: 12 }).map((tokens) => tokens.join(' '));
const hostileMapping = fc.constantFrom<unknown>(
  { '@path': '$.properties.total' },
  { '@path': '$.__proto__.x' },
  { '@template': '{{properties.total}}' },
  { '@liquid': '{% for i in (1..100000) %}x{% endfor %}' },
  { '@liquid': '{{ properties.total | upcase }}' },
  { '@liquid': `${'{{ "a" | append: "a" }}'.repeat(60)}` },
  { '@if': { exist: { '@path': '$.x' }, then: 1 } },
  { '@nonsense': 1 },
  { '@arrayPath': ['$.properties.items', { v: { '@path': '$.v' } }] },
  { '@split': { separator: ',', value: { '@path': '$.x' } } },
);
const hostileEvent = fc.record({
  event: fc.constantFrom('Order Completed', 'Other'),
  properties: fc.record({
    total: fc.oneof(fc.integer(), fc.constant('x'.repeat(5_000)), fc.constant(`http://${':'.repeat(5_000)}`)),
    'card.number': fc.constantFrom('4111111111111111', '1234'),
    items: fc.oneof(fc.constant(Array.from({ length: 2_000 }, (_, i) => ({ i }))), fc.constant(Array.from({ length: 2_000 }, () => 0))),
  }),
});

const answered = (status: number, what: string) => {
  if (status >= 500 || status < 200) throw new Error(`${what} answered ${status}`);
};

it('saves or refuses any hostile program in every language, then answers every call 200 through what it saved', async () => {
  await fc.assert(
    fc.asyncProperty(hostileRule, hostileFql, hostileMapping, hostileEvent, async (rule, fql, data, event) => {
      answered((await call('PUT', `/admin/tracking-plans/${planId}/rules`, { rules: [{ ...rule, ...(rule.type === 'TRACK' && { key: 'Order Completed' }), version: 1 }] })).status, `rule ${JSON.stringify(rule).slice(0, 200)}`);
      const filter = await call('POST', `/admin/destinations/${filteredDestination}/filters`, { title: 't', enabled: true, if: fql, actions: [{ type: 'DROP' }] });
      answered(filter.status, `filter ${fql}`);
      if (filter.status === 201) expect((await call('DELETE', `/admin/destinations/${filteredDestination}/filters/${filter.json.id}`)).status).toBe(204);
      answered((await call('PATCH', `/admin/destinations/${actionsDestination}`, { mappings: [mapping(data, fql)] })).status, `mapping ${JSON.stringify(data)} under ${fql}`);
      const tracked = await track(event);
      if (tracked.status !== 200) throw new Error(`track answered ${tracked.status}: ${JSON.stringify(tracked.json)}`);
    }),
    { seed: SEED, numRuns: RUNS },
  );
  await stillServing();
}, 600_000);
