import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Agent } from 'undici';
import { createWebhookAgent } from '../../src/activities/post-webhook';
import { parseAllowlist } from '../../src/delivery/egress';
import { functionFetch } from '../../src/functions/function-fetch';
import { SandboxPool } from '../../src/functions/sandbox-pool';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * Code from Segment's public functions library (test/fixtures/segment-functions-library: handlers and
 * example payloads copied unchanged, MIT) run in Switchyard's real sandbox: each source function, on
 * each of its example payloads, emits the calls Segment's own local runner emits, and each
 * destination function sends the requests it sends (to a receiver on 127.0.0.1: only the URL a
 * handler calls is rewritten, as manifest.json lists). expected.json is the Segment runner's
 * answer, recorded by record-expected.js beside it.
 */

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'segment-functions-library');
interface Manifest {
  sources: string[];
  destinations: Record<string, { rewrite: Record<string, string>; settings: Record<string, unknown>; clock?: string }>;
  events: ({ type: string } & Record<string, unknown>)[];
}
interface Recorded {
  result?: unknown;
  error?: { type: string; message: string };
  events?: Record<string, unknown>[];
  objects?: Record<string, unknown>[];
  requests?: { method: string; path: string; headers: Record<string, string>; body: string }[];
}
const manifest = JSON.parse(readFileSync(path.join(FIXTURES, 'manifest.json'), 'utf8')) as Manifest;
const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8')) as { recordedAt?: number; sources: Record<string, Recorded>; destinations: Record<string, Recorded> };
const handlerCode = (kind: string, name: string) => readFileSync(path.join(FIXTURES, kind, name, 'handler.js'), 'utf8');

/** Headers the HTTP client adds on its own (they differ between node-fetch, Node's fetch and the sandbox's): not the handler's. */
const TRANSPORT = new Set(['host', 'connection', 'content-length', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'sec-fetch-mode', 'transfer-encoding']);
const handlerHeaders = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !TRANSPORT.has(name)));

/** The URL Segment's runner builds for a request without one (buildpack/boreal's createURL). */
function requestUrl(payload: { url?: string; queryParameters?: string | Record<string, string | string[]> }): string {
  if (payload.url) return payload.url;
  const query = payload.queryParameters;
  if (typeof query === 'string') return `https://fn.segmentapis.com/${query.startsWith('?') ? '' : '?'}${query}`;
  if (!query) return 'https://fn.segmentapis.com/';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) for (const item of Array.isArray(value) ? value : [value]) params.append(key, item);
  return `https://fn.segmentapis.com/?${params.toString()}`;
}

let receiver: Receiver;
let pool: SandboxPool;
let agent: Agent;

beforeAll(async () => {
  receiver = await startReceiver();
  agent = createWebhookAgent(parseAllowlist(['127.0.0.0/8']), 5000);
  pool = new SandboxPool({ threads: 1, timeoutMs: 5000, memoryBytes: 64 * 1024 * 1024, outputLimit: 512 * 1024, fetch: functionFetch(agent) });
});

afterAll(async () => {
  await pool?.close();
  await receiver?.close();
  await agent?.close();
});

describe.each(manifest.sources)('source function %s', (name) => {
  const examples = readdirSync(path.join(FIXTURES, 'sources', name, 'webhook-examples')).sort();
  it.each(examples)('emits what Segment\'s runner emits for %s', async (example) => {
    const { payload, settings = {} } = JSON.parse(readFileSync(path.join(FIXTURES, 'sources', name, 'webhook-examples', example), 'utf8')) as {
      payload: { body: unknown; headers?: Record<string, string>; url?: string; queryParameters?: string | Record<string, string> };
      settings?: Record<string, unknown>;
    };
    const input = { headers: payload.headers ?? {}, body: typeof payload.body === 'string' ? payload.body : JSON.stringify(payload.body), url: requestUrl(payload) };
    const outcome = await pool.run({ sessionKey: `library:source:${name}`, code: handlerCode('sources', name), handler: 'onRequest', input, settings });
    const segment = expected.sources[`${name}/${example}`];
    if (segment.error) {
      expect(outcome.error).toEqual(segment.error);
      return;
    }
    expect(outcome.error).toBeUndefined();
    const emitted = (outcome.emitted ?? []) as { type: string; message: Record<string, unknown> }[];
    const events = emitted.filter((e) => e.type !== 'set').map((e) => ({ type: e.type, ...e.message }));
    const objects = emitted.filter((e) => e.type === 'set').map((e) => e.message);
    // Segment's runner keeps the spec's fields of each call; Switchyard keeps every field given (the ingestion path's rule), so Segment's are a subset.
    expect(events).toHaveLength(segment.events!.length);
    events.forEach((event, i) => expect(event).toMatchObject(segment.events![i]));
    expect(objects).toEqual(segment.objects);
  });
});

describe.each(Object.keys(manifest.destinations))('destination function %s', (name) => {
  const { rewrite, settings, clock } = manifest.destinations[name];
  /** A body with the handler's reading of the clock (Date.now(), in seconds) replaced, once checked recent: the runs compared took place at different times. */
  const timeless = (body: string, ranAtSeconds: number) =>
    clock
      ? body.replace(new RegExp(clock, 'g'), (whole, seconds: string) => {
          expect(Math.abs(Number(seconds) - ranAtSeconds)).toBeLessThan(60);
          return whole.replace(seconds, 'NOW');
        })
      : body;
  const recordedAtSeconds = Number(expected.recordedAt ?? 0);
  it.each(manifest.events.map((event) => [event.type, event] as const))('answers a %s event and sends the requests Segment\'s runner sends', async (type, event) => {
    const code = Object.entries(rewrite).reduce((c, [from, to]) => c.split(from).join(to.replace('{receiver}', receiver.url)), handlerCode('destinations', name));
    const before = receiver.requests.length;
    const handler = `on${type[0].toUpperCase()}${type.slice(1)}`;
    const outcome = await pool.run({ sessionKey: `library:destination:${name}`, code, handler, input: event, settings });
    const segment = expected.destinations[`${name}/${type}`];
    // A missing handler is EventNotSupported in both; the disposition is read from the class, and the messages are worded apart.
    if (segment.error) expect(outcome.error?.type).toBe(segment.error.type);
    else expect({ error: outcome.error, result: outcome.result ?? null }).toEqual({ error: undefined, result: segment.result });
    const now = Date.now() / 1000;
    const sent = receiver.requests.slice(before).map((r) => ({ method: r.method, path: r.path.replace(/^\/hook/, ''), headers: handlerHeaders(r.headers), body: timeless(r.body, now) }));
    expect(sent).toEqual(segment.requests!.map((r) => ({ ...r, headers: handlerHeaders(r.headers), body: timeless(r.body, recordedAtSeconds) })));
  });
});
