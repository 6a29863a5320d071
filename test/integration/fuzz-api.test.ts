import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { AddressInfo } from 'node:net';
import { isIsoDateTime } from '../../src/delivery/timestamps';
import { rawExchange } from '../helpers/raw-http';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { ADMIN_TOKEN, basicAuth, sourceWithDestination, startSystem, type TestSystem } from '../helpers/system';

/**
 * Property-based fuzzing of the ingestion and admin APIs. Every generated request — wrong types,
 * huge strings, deep nesting, invalid UTF-8, bad gzip, prototype-pollution keys, oversize or
 * malformed HTTP — must get a 4xx with a `{code, message}` JSON body (or a 2xx when it happens to
 * be valid), never a 5xx; and whatever reaches the webhook receiver must be a well-formed, signed
 * message that some 200 accepted.
 */

// Sized for CI's budget; FUZZ_RUNS_FACTOR=10 fuzzes ten times as long (the seed is printed either way).
const FACTOR = Number(process.env.FUZZ_RUNS_FACTOR ?? 1);
const INGEST_RUNS = 1_500 * FACTOR;
const ADMIN_RUNS = 2_000 * FACTOR;
const RAW_HTTP_RUNS = 200 * FACTOR;
const SECRET = 'fuzz-shared-secret';

let system: TestSystem;
let receiver: Receiver;
let writeKey: string;
let adminSourceId: string;
let adminDestinationId: string;
let port: number;

beforeAll(async () => {
  // Bad and good keys and tokens come from one address here: a spent per-address limit would refuse the good ones too (rate-limit and admin-token tests test it).
  system = await startSystem({ ingestRateLimit: 0, ingestUnauthenticatedRateLimit: 0, adminTokenFailureLimit: 0, httpHeadersTimeout: 2_000, httpRequestTimeout: 4_000 });
  receiver = await startReceiver();
  const created = await sourceWithDestination(system.store, { sharedSecret: SECRET, webhooks: [{ url: receiver.url, headers: {} }] });
  writeKey = created.writeKey;
  const admin = await sourceWithDestination(system.store, { enabled: false, webhooks: [{ url: 'https://example.com/hook', headers: {} }] });
  adminSourceId = admin.source.id;
  adminDestinationId = admin.destination.id;
  await system.app.listen({ port: 0, host: '127.0.0.1' });
  port = (system.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await receiver.close();
  await system.close();
});

type Expect = 'client-error' | 'any';
interface Case {
  method: 'POST' | 'PATCH' | 'GET' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** 'client-error': malformed by construction, so only a 4xx is right; 'any': may be valid. */
  expect: Expect;
  /** messageIds the body carries: delivered only if the request got 200. */
  messageIds: string[];
  label: string;
  /** The field a 4xx must name first (`batch[2].sentAt`), where the case breaks exactly one rule. */
  names?: string;
}

let nextId = 0;
const freshId = () => `fz-${nextId++}`;

const CALLS = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
const routeArb = fc.constantFrom(...CALLS.map((t) => `/v1/${t}`), '/v1/batch', '/v1/import');

/** A valid call of each type: the mutations below start from these. */
const validCall = (type: (typeof CALLS)[number]): Record<string, unknown> => ({
  type,
  userId: 'user-1',
  anonymousId: 'anon-1',
  previousId: 'prev-1',
  event: 'Order Completed',
  groupId: 'group-1',
  name: 'Home',
  properties: { total: 3, tags: ['a'] },
  traits: { plan: 'pro' },
  context: { ip: '203.0.113.9', device: { model: 'x' } },
  timestamp: '2026-01-01T00:00:00.000Z',
});

const hostileKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__');
const jsonish = fc.jsonValue({ maxDepth: 3 });
const anyField = fc.constantFrom('userId', 'anonymousId', 'event', 'groupId', 'previousId', 'messageId', 'timestamp', 'sentAt', 'originalTimestamp', 'properties', 'traits', 'context', 'integrations', 'name', 'category', 'type', 'writeKey', 'batch');

/** JSON text nested `depth` levels deep, written as text: JSON.stringify itself would overflow the stack. */
function nestedText(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? '[' : '{"n":';
    close = (i % 2 ? ']' : '}') + close;
  }
  return `${open}"leaf"${close}`;
}

/** Puts a messageId on every object the body holds at message level, so accepted ones can be traced. */
function tagged(route: string, body: unknown): { body: unknown; messageIds: string[] } {
  const messageIds: string[] = [];
  const tag = (m: unknown) => {
    if (m && typeof m === 'object' && !Array.isArray(m)) {
      const id = freshId();
      messageIds.push(id);
      return { ...(m), messageId: id };
    }
    return m;
  };
  if (route.endsWith('/batch') || route.endsWith('/import')) {
    if (body && typeof body === 'object' && !Array.isArray(body) && Array.isArray((body as { batch?: unknown }).batch)) {
      return { body: { ...(body), batch: (body as { batch: unknown[] }).batch.map(tag) }, messageIds };
    }
    return { body, messageIds };
  }
  return { body: tag(body), messageIds };
}

type Auth = { kind: 'valid' } | { kind: 'none' } | { kind: 'garbage'; value: string };
const authArb: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('Basic ', 'Bearer ', '', 'Basic', 'Basic ====='), fc.string({ maxLength: 300 }))
      // Header values must be printable latin-1 to be sent at all.
      .map(([scheme, rest]) => ({ kind: 'garbage' as const, value: `${scheme}${rest.replace(/[^\x20-\x7e]/g, '')}` })),
  },
);

function authHeaders(auth: Auth): Record<string, string> {
  if (auth.kind === 'valid') return { authorization: basicAuth(writeKey) };
  if (auth.kind === 'none') return {};
  return { authorization: auth.value };
}

const json = { 'content-type': 'application/json' };

/** Bodies that keep the JSON shape but put the wrong thing somewhere. */
const mutatedCall = fc
  .record({
    type: fc.constantFrom(...CALLS),
    route: routeArb,
    edits: fc.array(fc.tuple(anyField, fc.oneof(jsonish, fc.string({ maxLength: 50_000 }), fc.constant(null), fc.constant(undefined))), { minLength: 1, maxLength: 3 }),
    asBatch: fc.boolean(),
    auth: authArb,
  })
  .map(({ type, route, edits, asBatch, auth }): Case => {
    const call = validCall(type);
    for (const [field, value] of edits) call[field] = value;
    const batchRoute = route.endsWith('/batch') || route.endsWith('/import');
    const { body, messageIds } = tagged(route, batchRoute && asBatch ? { batch: [call] } : call);
    return { method: 'POST', url: route, headers: { ...json, ...authHeaders(auth) }, payload: JSON.stringify(body), expect: 'any', messageIds, label: `mutated call ${JSON.stringify(edits).slice(0, 200)}` };
  });

const arbitraryBody = fc.record({ route: routeArb, body: jsonish, auth: authArb }).map(({ route, body, auth }): Case => {
  const t = tagged(route, body);
  return { method: 'POST', url: route, headers: { ...json, ...authHeaders(auth) }, payload: JSON.stringify(t.body) ?? 'null', expect: 'any', messageIds: t.messageIds, label: `arbitrary JSON ${String(JSON.stringify(t.body)).slice(0, 200)}` };
});

const deepBody = fc.record({ route: routeArb, depth: fc.integer({ min: 65, max: 20_000 }), where: fc.constantFrom('properties', 'context', 'traits', 'integrations') }).map(
  ({ route, depth, where }): Case => ({
    method: 'POST',
    url: route,
    headers: { ...json, authorization: basicAuth(writeKey) },
    payload: `${JSON.stringify({ ...validCall('track'), messageId: freshId() }).slice(0, -1)},"${where}":${nestedText(depth)}}`,
    expect: 'client-error',
    messageIds: [],
    label: `nested ${depth} deep`,
  }),
);

const hugeString = fc.record({ route: routeArb, size: fc.integer({ min: 33 * 1024, max: 2 * 1024 * 1024 }), field: fc.constantFrom('event', 'userId', 'name', 'properties') }).map(
  ({ route, size, field }): Case => {
    const value = field === 'properties' ? { blob: 'x'.repeat(size) } : 'x'.repeat(size);
    const call = { ...validCall('track'), messageId: freshId(), [field]: value };
    const body = route.endsWith('/batch') || route.endsWith('/import') ? { batch: [call] } : call;
    return { method: 'POST', url: route, headers: { ...json, authorization: basicAuth(writeKey) }, payload: JSON.stringify(body), expect: 'client-error', messageIds: [], label: `huge ${field} (${size} bytes)` };
  },
);

/** Byte sequences that are not UTF-8: a lone continuation byte, a truncated sequence, an overlong form, a surrogate, 0xFF. */
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0x80]),
  Buffer.from([0xc3]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
);
const badUtf8Body = fc.record({ route: routeArb, bad: invalidUtf8, at: fc.nat() }).map(({ route, bad, at }): Case => {
  const text = JSON.stringify({ ...validCall('track'), messageId: freshId(), event: 'EVENT-NAME-HERE' });
  const marker = text.indexOf('EVENT-NAME-HERE') + (at % 'EVENT-NAME-HERE'.length);
  const payload = Buffer.concat([Buffer.from(text.slice(0, marker)), bad, Buffer.from(text.slice(marker))]);
  return { method: 'POST', url: route, headers: { ...json, authorization: basicAuth(writeKey) }, payload, expect: 'client-error', messageIds: [], label: 'invalid UTF-8' };
});

const pollutingBody = fc.record({ route: routeArb, key: fc.constantFrom('__proto__', 'constructor'), where: fc.constantFrom('top', 'properties', 'context', 'batch') }).map(
  ({ route, key, where }): Case => {
    const poison = key === '__proto__' ? '{"polluted":"yes","isAdmin":true}' : '{"prototype":{"polluted":"yes"}}';
    const call = JSON.stringify({ ...validCall('track'), messageId: freshId() }).slice(1, -1);
    const payload =
      where === 'top'
        ? `{"${key}":${poison},${call}}`
        : where === 'batch'
          ? `{"batch":[{"${key}":${poison},${call}}]}`
          : `{${call},"${where}":{"${key}":${poison}}}`;
    return { method: 'POST', url: route, headers: { ...json, authorization: basicAuth(writeKey) }, payload, expect: 'client-error', messageIds: [], label: `${key} in ${where}` };
  },
);

const GZIP_BOMB = gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20));
const badGzip = fc
  .record({
    route: routeArb,
    kind: fc.constantFrom('random', 'truncated', 'bomb', 'not-json', 'wrong-encoding'),
    bytes: fc.uint8Array({ minLength: 0, maxLength: 2_000 }),
    cut: fc.nat(),
  })
  .map(({ route, kind, bytes, cut }): Case => {
    const gz = gzipSync(JSON.stringify({ ...validCall('track'), messageId: freshId() }));
    const payload =
      kind === 'random'
        ? Buffer.from(bytes)
        : kind === 'truncated'
          ? gz.subarray(0, Math.max(1, cut % (gz.length - 1)))
          : kind === 'bomb'
            ? GZIP_BOMB
            : kind === 'not-json'
              ? gzipSync(Buffer.from(bytes))
              : gz;
    const encoding = kind === 'wrong-encoding' ? 'br' : 'gzip';
    return { method: 'POST', url: route, headers: { ...json, 'content-encoding': encoding, authorization: basicAuth(writeKey) }, payload, expect: 'client-error', messageIds: [], label: `gzip: ${kind}` };
  });

const wrongMedia = fc
  .record({ route: routeArb, type: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', ''), bytes: fc.uint8Array({ maxLength: 500 }) })
  .map(({ route, type, bytes }): Case => ({
    method: 'POST',
    url: route,
    headers: { ...(type && { 'content-type': type }), authorization: basicAuth(writeKey) },
    payload: Buffer.from(bytes),
    expect: 'client-error',
    messageIds: [],
    label: `content-type ${type || '(none)'}`,
  }));

const notJson = fc.record({ route: routeArb, text: fc.string({ maxLength: 2_000 }) }).map(({ route, text }): Case => {
  let valid = true;
  try {
    JSON.parse(text);
  } catch {
    valid = false;
  }
  return { method: 'POST', url: route, headers: { ...json, authorization: basicAuth(writeKey) }, payload: text, expect: valid ? 'any' : 'client-error', messageIds: [], label: 'text that is not JSON' };
});

/** Strings that are no ISO 8601 date-time (`"yesterday"` as a batch's sentAt was a 500). */
const notADate = fc.oneof(
  fc.constantFrom('yesterday', '', 'now', 'NaN', '2026-01-01', '2026-01-01T00:00:00', '2026-13-01T00:00:00Z', '2026-01-01T25:61:00Z', '2026-01-01T00:00:00+99:99', '1767225600000', '+275760-09-13T00:00:00.000Z', 'Thu, 01 Jan 2026 00:00:00 GMT'),
  fc.string({ maxLength: 40 }).filter((value) => !isIsoDateTime(value)),
  fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.constant({}), fc.constant([])),
);

/** Every date field a sender gives, one of them no date: a 400 naming that field, wherever it sits. */
const badDate = fc
  .record({
    type: fc.constantFrom(...CALLS),
    where: fc.constantFrom('call', 'batch', 'batch item'),
    field: fc.constantFrom('sentAt', 'timestamp', 'originalTimestamp'),
    size: fc.integer({ min: 1, max: 3 }),
    value: notADate,
  })
  .map(({ type, where, field, size, value }): Case => {
    const calls = Array.from({ length: size }, () => validCall(type));
    let body: unknown;
    let names: string;
    if (where === 'call') {
      body = { ...calls[0], [field]: value };
      names = field;
    } else if (where === 'batch') {
      body = { batch: calls, sentAt: value };
      names = 'sentAt';
    } else {
      calls[size - 1] = { ...calls[size - 1], [field]: value };
      body = { batch: calls };
      names = `batch[${size - 1}].${field}`;
    }
    const route = where === 'call' ? `/v1/${type}` : '/v1/batch';
    const traced = tagged(route, body);
    return { method: 'POST', url: route, headers: { ...json, authorization: basicAuth(writeKey) }, payload: JSON.stringify(traced.body), expect: 'client-error', messageIds: traced.messageIds, label: `${names} = ${JSON.stringify(value)}`, names };
  });

const ingestCase = fc.oneof(
  { weight: 2, arbitrary: badDate },
  { weight: 5, arbitrary: mutatedCall },
  { weight: 3, arbitrary: arbitraryBody },
  { weight: 1, arbitrary: deepBody },
  { weight: 1, arbitrary: hugeString },
  { weight: 2, arbitrary: badUtf8Body },
  { weight: 2, arbitrary: pollutingBody },
  { weight: 2, arbitrary: badGzip },
  { weight: 1, arbitrary: wrongMedia },
  { weight: 2, arbitrary: notJson },
);

function checkReply(c: Case, status: number, contentType: string | undefined, body: string): void {
  const where = `${c.label}: ${c.method} ${c.url} → ${status} ${body.slice(0, 300)}`;
  if (status >= 500) throw new Error(`5xx for ${where}`);
  if (c.expect === 'client-error' && (status < 400 || status >= 500)) throw new Error(`expected a 4xx for ${where}`);
  if (status >= 400) {
    if (!contentType?.startsWith('application/json')) throw new Error(`error reply is not JSON (${contentType}) for ${where}`);
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    if (typeof parsed.code !== 'string' || typeof parsed.message !== 'string') throw new Error(`error reply lacks {code, message} for ${where}`);
    if (c.names && !parsed.message.startsWith(`${c.names}: `)) throw new Error(`error reply does not name ${c.names} for ${where}`);
  }
}

/** Reports a failing case by its label and error only: the generated bodies run to megabytes. */
function reporter<T extends { label: string }>(details: fc.RunDetails<[T]>): void {
  if (!details.failed) return;
  const label = details.counterexample?.[0]?.label ?? '(no counterexample)';
  throw new Error(`failed after ${details.numRuns} runs (seed ${details.seed}) on ${label.slice(0, 300)}: ${String(details.errorInstance).slice(0, 1_500)}`);
}

const accepted = new Set<string>();
const refused = new Set<string>();
const tally = new Map<string, number>();

describe('fuzzing the ingestion API', () => {
  it(`answers ${INGEST_RUNS} generated malformed requests with a 4xx JSON error, never a 5xx`, async () => {
    await fc.assert(
      fc.asyncProperty(ingestCase, async (c) => {
        const res = await system.app.inject({ method: c.method, url: c.url, headers: c.headers, payload: c.payload });
        checkReply(c, res.statusCode, res.headers['content-type'] as string | undefined, res.body);
        tally.set(`${res.statusCode}`, (tally.get(`${res.statusCode}`) ?? 0) + 1);
        for (const id of c.messageIds) (res.statusCode === 200 ? accepted : refused).add(id);
      }),
      { numRuns: INGEST_RUNS, endOnFailure: true, reporter },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('isAdmin');
    // The generators reach both sides: plenty refused, some accepted.
    expect(tally.get('400')).toBeGreaterThan(INGEST_RUNS / 4);
    expect(accepted.size).toBeGreaterThan(10);
    console.log(`ingestion fuzz: replies by status ${JSON.stringify(Object.fromEntries(tally))}; ${accepted.size} messages accepted, ${refused.size} refused`);
  }, 240_000);

  it('lets only well-formed, signed messages that got a 200 reach the receiver', async () => {
    for (const id of accepted) await receiver.waitForMessage(id, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const request of receiver.requests) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      const body = JSON.parse(request.body) as Record<string, unknown>;
      expect(request.body).toBe(JSON.stringify(body));
      expect(request.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(request.body, 'utf8').digest('hex'));
      expect(CALLS).toContain(body.type);
      expect(body.version).toBe(1);
      expect(typeof body.messageId).toBe('string');
      expect(accepted.has(body.messageId as string)).toBe(true);
      expect(new Date(body.timestamp as string).toISOString()).toBe(body.timestamp);
      expect(typeof body.context === 'object' && body.context !== null && !Array.isArray(body.context)).toBe(true);
      expect(typeof body.userId === 'string' || typeof body.anonymousId === 'string').toBe(true);
      expect(Object.keys(body)).not.toContain('__proto__');
      expect(Buffer.byteLength(request.body)).toBeLessThan(40 * 1024);
    }
    const delivered = new Set(receiver.requests.map((r) => JSON.parse(r.body).messageId as string));
    expect([...delivered].filter((id) => refused.has(id))).toEqual([]);
    expect(delivered.size).toBe(accepted.size);
  }, 120_000);
});

describe('fuzzing the admin API', () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, ...json };
  const webhookArb = fc.oneof(
    fc.record({ url: fc.oneof(fc.webUrl(), fc.string({ maxLength: 3_000 }), jsonish), headers: fc.option(fc.dictionary(fc.string({ maxLength: 30 }), fc.oneof(fc.string({ maxLength: 100 }), jsonish), { maxKeys: 7 })) }, { requiredKeys: ['url'] }),
    jsonish,
  );
  const destinationBody = fc
    .tuple(
      fc.record(
        {
          name: fc.oneof(fc.string({ maxLength: 300 }), jsonish),
          enabled: fc.oneof(fc.boolean(), jsonish),
          sharedSecret: fc.oneof(fc.string({ maxLength: 2_000 }), fc.constant(null), jsonish),
          signingSecret: fc.oneof(fc.string({ maxLength: 200 }), fc.constant('whsec_AAAA'), fc.constant(null), jsonish),
          signingSecretOverlap: fc.oneof(fc.string({ maxLength: 30 }), jsonish),
          webhooks: fc.oneof(fc.array(webhookArb, { maxLength: 7 }), jsonish),
        },
        { requiredKeys: [] },
      ),
      fc.option(fc.tuple(hostileKey, jsonish)),
    )
    .map(([body, extra]) => {
      // defineProperty makes `__proto__` an own key that JSON.stringify writes out.
      if (extra) Object.defineProperty(body, extra[0], { value: extra[1], enumerable: true });
      return body;
    });
  const idArb = fc.oneof(
    fc.string({ maxLength: 200 }).map((id) => encodeURIComponent(id) || '%20'),
    fc.constant('x'.repeat(5_000)),
    fc.constantFrom('%00', '..', '%2e%2e%2f', '%E0%A4%A', '%', '%%', '%ZZ', '%F0%9F%92%A5'),
  );

  const adminCase = fc.oneof(
    fc.record({ body: fc.oneof(fc.record({ name: fc.oneof(fc.string({ maxLength: 400 }), jsonish) }), jsonish) }).map(({ body }): Case => ({ method: 'POST', url: '/admin/sources', headers: admin, payload: JSON.stringify(body) ?? 'null', expect: 'any', messageIds: [], label: 'create source' })),
    destinationBody.map((body): Case => ({ method: 'POST', url: `/admin/sources/${adminSourceId}/destinations`, headers: admin, payload: JSON.stringify(body), expect: 'any', messageIds: [], label: 'create destination' })),
    destinationBody.map((body): Case => ({ method: 'PATCH', url: `/admin/destinations/${adminDestinationId}`, headers: admin, payload: JSON.stringify(body), expect: 'any', messageIds: [], label: 'patch destination' })),
    fc.record({ id: idArb, method: fc.constantFrom<'GET' | 'DELETE'>('GET', 'DELETE'), what: fc.constantFrom('sources', 'destinations') }).map(
      ({ id, method, what }): Case => ({ method, url: `/admin/${what}/${id}`, headers: { authorization: admin.authorization }, expect: 'any', messageIds: [], label: `${method} ${what}` }),
    ),
    fc.record({ body: jsonish, auth: fc.string({ maxLength: 200 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')) }).map(({ body, auth }): Case => ({ method: 'POST', url: '/admin/sources', headers: { ...json, authorization: `Bearer ${auth}x` }, payload: JSON.stringify(body) ?? 'null', expect: 'client-error', messageIds: [], label: 'bad admin token' })),
    pollutingBody.map((c): Case => ({ ...c, url: `/admin/destinations/${adminDestinationId}`, method: 'PATCH', headers: admin, label: `admin ${c.label}` })),
    badUtf8Body.map((c): Case => ({ ...c, url: `/admin/sources`, headers: admin, label: `admin ${c.label}` })),
    deepBody.map((c): Case => ({ ...c, url: `/admin/sources/${adminSourceId}/destinations`, headers: admin, label: `admin ${c.label}` })),
  );

  it(`answers ${ADMIN_RUNS} generated requests with a 4xx JSON error or a valid reply, never a 5xx, never echoing a secret`, async () => {
    await fc.assert(
      fc.asyncProperty(adminCase, async (c) => {
        const res = await system.app.inject({ method: c.method, url: c.url, headers: c.headers, payload: c.payload });
        checkReply(c, res.statusCode, res.headers['content-type'] as string | undefined, res.body);
        if (res.statusCode < 300 && typeof c.payload === 'string' && c.payload.startsWith('{')) {
          const sent = JSON.parse(c.payload) as { sharedSecret?: unknown; signingSecret?: unknown };
          for (const secret of [sent.sharedSecret, sent.signingSecret]) {
            if (typeof secret === 'string' && secret.length >= 8) expect(res.body).not.toContain(JSON.stringify(secret));
          }
        }
      }),
      { numRuns: ADMIN_RUNS, endOnFailure: true, reporter },
    );
    // The fuzzed destination is still readable, whatever was patched into it.
    const after = await system.app.inject({ method: 'GET', url: `/admin/destinations/${adminDestinationId}`, headers: admin });
    expect(after.statusCode).toBe(200);
  }, 240_000);
});

describe('fuzzing at the HTTP level (real socket)', () => {
  const rawCase = fc.oneof(
    fc.integer({ min: 17 * 1024, max: 256 * 1024 }).map((n) => ({ label: `header of ${n} bytes`, bytes: Buffer.from(`POST /v1/track HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(n)}\r\nContent-Length: 2\r\n\r\n{}`) })),
    fc.integer({ min: 300, max: 3_000 }).map((n) => ({ label: `${n} headers`, bytes: Buffer.from(`GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: n }, (_, i) => `X-H${i}: ${'v'.repeat(60)}\r\n`).join('')}\r\n`) })),
    fc.uint8Array({ minLength: 1, maxLength: 2_000 }).map((b) => ({ label: 'random bytes', bytes: Buffer.concat([Buffer.from(b), Buffer.from('\r\n\r\n')]) })),
    fc.string({ maxLength: 200 }).map((s) => ({ label: 'bad request line', bytes: Buffer.from(`${s.replace(/[\r\n]/g, '')} /v1/track HTTP/9.9\r\nHost: x\r\n\r\n`) })),
    fc.constantFrom(
      { label: 'blank lines only', bytes: Buffer.from('\r\r\n\r\n') },
      { label: 'keep-alive request to no route', bytes: Buffer.from('GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n') },
      { label: 'header without colon', bytes: Buffer.from('POST /v1/track HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n') },
      { label: 'bad content-length', bytes: Buffer.from('POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}') },
      { label: 'two content-lengths', bytes: Buffer.from('POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}') },
      { label: 'bad chunked body', bytes: Buffer.from('POST /v1/track HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n') },
      { label: 'NUL in header', bytes: Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n') },
      { label: 'content-length with transfer-encoding', bytes: Buffer.from('POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n') },
    ),
  );

  it(`answers ${RAW_HTTP_RUNS} oversize or malformed raw requests with a 4xx JSON error`, async () => {
    await fc.assert(
      fc.asyncProperty(rawCase, async ({ label, bytes }) => {
        // Bytes that leave the parser waiting (blank lines only, say) get a 408 once HTTP_HEADERS_TIMEOUT passes.
        const reply = await rawExchange(port, [bytes], { timeoutMs: 10_000 });
        if (reply.status === undefined) throw new Error(`${label}: no HTTP reply (${JSON.stringify(reply.text.slice(0, 100))})`);
        checkReply({ method: 'POST', url: '(raw)', headers: {}, expect: 'client-error', messageIds: [], label }, reply.status, reply.contentType, reply.body);
      }),
      { numRuns: RAW_HTTP_RUNS, endOnFailure: true, reporter },
    );
  }, 240_000);
});
