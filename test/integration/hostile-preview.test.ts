import path from 'node:path';
import { faultDir, readLog, startOwnApi, stopProcess, type OwnApi } from '../helpers/faults';
import { createTestDatabase } from '../helpers/postgres';
import { ADMIN_TOKEN, basicAuth } from '../helpers/system';

/**
 * A read token's preview with any hostile path answers 400, and the process
 * serves the next request. Before: one filter preview with a read token and a
 * DROP_PROPERTIES key `"constructor.prototype"` deleted Object.prototype.hasOwnProperty in the API
 * process, and the next request killed it. Against a real API process (src/server.ts) on
 * PostgreSQL, with the real Temporal of the run behind ingestion.
 */
let api: OwnApi;
let readToken: string;
let destinationId: string;
let writeKey: string;
let sourceId: string;

async function call(method: string, url: string, token: string, payload?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${api.url}${url}`, {
    method,
    headers: { authorization: token, ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { body: JSON.stringify(payload) }),
  });
  const body = await response.text();
  return { status: response.status, json: body ? JSON.parse(body) : undefined };
}

const asAdmin = `Bearer ${ADMIN_TOKEN}`;

beforeAll(async () => {
  const url = await createTestDatabase('hostile_preview');
  api = await startOwnApi({ ...process.env, DATABASE_URL: url, ADMIN_TOKEN, LOG_FORMAT: 'json' }, path.join(faultDir('hostile-preview'), 'api.log'));
  const source = await call('POST', '/admin/sources', asAdmin, { name: 'Shop' });
  expect(source.status).toBe(201);
  writeKey = source.json.writeKey;
  sourceId = source.json.id;
  // Switched off: ingestion is what must keep working here, not a delivery.
  const destination = await call('POST', `/admin/sources/${source.json.id}/destinations`, asAdmin, { name: 'Ads', enabled: false, webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }] });
  expect(destination.status).toBe(201);
  destinationId = destination.json.id;
  const token = await call('POST', '/admin/tokens', asAdmin, { name: 'portal reader', scopes: ['read'] });
  expect(token.status).toBe(201);
  readToken = `Bearer ${token.json.token}`;
}, 180_000);
afterAll(async () => {
  await stopProcess(api?.process);
});

const filter = (change: Record<string, unknown>) => ({ title: 't', enabled: true, if: 'all', actions: [{ type: 'DROP' }], ...change });
const event = { type: 'track', event: 'x', userId: 'u', properties: { items: [] } };

describe("a read token's preview with a hostile path", () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      "the review's reproduction: DROP_PROPERTIES keys into Object, Array and String prototypes",
      filter({
        actions: [
          {
            type: 'DROP_PROPERTIES',
            fields: { 'constructor.prototype': ['hasOwnProperty', 'toString', 'valueOf'], 'properties.items.constructor.prototype': ['push', 'map'], 'type.constructor.prototype': ['toLowerCase', 'slice', 'replace', 'split'] },
          },
        ],
      }),
      /^filter\.actions\[0\]\.fields: key "constructor\.prototype" has a forbidden segment "constructor"/,
    ],
    ['an ALLOW_PROPERTIES key through __proto__', filter({ actions: [{ type: 'ALLOW_PROPERTIES', fields: { 'a.__proto__.b': ['x'] } }] }), /^filter\.actions\[0\]\.fields: key "a\.__proto__\.b" has a forbidden segment "__proto__"/],
    ['a listed name', filter({ actions: [{ type: 'DROP_PROPERTIES', fields: { '': ['constructor'] } }] }), /^filter\.actions\[0\]\.fields\[""\]: path "constructor" has a forbidden segment/],
    ['a SAMPLE path', filter({ actions: [{ type: 'SAMPLE', percent: 0.5, path: 'userId.constructor.prototype' }] }), /^filter\.actions\[0\]\.path: path "userId\.constructor\.prototype" has a forbidden segment "constructor"/],
    ['an FQL field', filter({ if: "properties.constructor.name = 'Object'" }), /^filter\.if: at column 1: field "properties\.constructor\.name" has a forbidden segment "constructor"/],
    ['an FQL condition nested 2,000 deep', filter({ if: `${'('.repeat(2_000)}event = 'x'${')'.repeat(2_000)}` }), /^filter\.if: at column 65: "\(" and "!" nest at most 64 deep/],
  ])('answers 400 naming the path for %s, and the process serves the next request', async (_, draft, message) => {
    const preview = await call('POST', `/admin/destinations/${destinationId}/filters/preview`, readToken, { event, filter: draft });
    expect(preview.status).toBe(400);
    expect(preview.json.message).toMatch(message);

    // The next requests: ingestion, an admin read and a preview that delivers, all on the same process.
    const tracked = await fetch(`${api.url}/v1/track`, { method: 'POST', headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u', event: 'Order Completed' }) });
    expect(tracked.status).toBe(200);
    expect((await call('GET', `/admin/destinations/${destinationId}`, readToken)).status).toBe(200);
    const honest = await call('POST', `/admin/destinations/${destinationId}/filters/preview`, readToken, { event, filter: filter({ actions: [{ type: 'DROP_PROPERTIES', fields: { '': ['userId'] } }] }) });
    expect(honest).toEqual({ status: 200, json: { delivered: true, body: { type: 'track', event: 'x', properties: { items: [] } }, matched: ['t'], filter: null } });
    expect(api.process.exitCode).toBeNull();
  });

  it.each<[string, string, RegExp]>([
    ['a field through __proto__', "properties.__proto__.x = 'y'", /^trigger: field "properties\.__proto__\.x" has a forbidden segment "__proto__"/],
    ['negations 2,000 deep (within its 2,048 characters)', `${'!'.repeat(2_000)}(event = 'x')`, /^trigger: "\(" and "!" nest at most 64 deep/],
  ])('answers 400 naming the rule for a replay trigger with %s, starting nothing', async (_, trigger, message) => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const replay = await call('POST', '/admin/replays', asAdmin, { sourceId, destinationId, since, until: new Date().toISOString(), trigger, dryRun: true });
    expect(replay.status).toBe(400);
    expect(replay.json.message).toMatch(message);
    expect(api.process.exitCode).toBeNull();
  });

  it('logged no failed request', () => {
    expect(readLog(api.logFile)).not.toMatch(/request failed|TypeError|RangeError/);
  });
});
