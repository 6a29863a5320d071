import { retryDelayMs, sourceDisposition } from '../../src/functions/source-retry';
import { decodeWebhookKey, emittedCalls, emittedMessageId, sourceFunctionWebhookUrl } from '../../src/functions/source-webhook';

/** A source function's webhook URL in Segment's form, read back; the messageIds its emitted calls get; its retry waits. */

describe("a source function's webhook URL", () => {
  const cases: [string, string, string, string][] = [
    ['https://events.example.com', 'src_abc', 'wk_0123456789abcdef', 'https://events.example.com/functions?b='],
    ['https://events.example.com/', 'src_abc', 'wk_0123456789abcdef', 'https://events.example.com/functions?b='],
    ['http://127.0.0.1:8080/ingest', 'src_x', 'k~!@#$%^&*()_+={}[]|;\'"<>,.?/', 'http://127.0.0.1:8080/ingest/functions?b='],
  ];
  it.each(cases)('%s, %s, %s → %s<base64>, read back', (base, sourceId, writeKey, prefix) => {
    const url = sourceFunctionWebhookUrl(base, sourceId, writeKey);
    expect(url.startsWith(prefix)).toBe(true);
    const b = new URL(url).searchParams.get('b');
    expect(Buffer.from(b!, 'base64').toString('utf8')).toBe(`${sourceId}::${writeKey}`);
    expect(decodeWebhookKey(b)).toEqual({ sourceId, writeKey });
  });

  const refused: [unknown, RegExp][] = [
    [undefined, /^b: is required/],
    ['', /^b: is required/],
    ['not base64!', /^b: is not base64/],
    ['a'.repeat(2000), /^b: is not base64/],
    [Buffer.from('no separator').toString('base64'), /^b: does not decode to sourceId::key/],
    [Buffer.from('::key-only').toString('base64'), /^b: does not decode to sourceId::key/],
    [Buffer.from('src_1::').toString('base64'), /^b: does not decode to sourceId::key/],
    [Buffer.from('src 1::key').toString('base64'), /^b: does not decode to sourceId::key/],
  ];
  it.each(refused)('refuses %p, naming b', (b, problem) => {
    const decoded = decodeWebhookKey(b);
    expect('problem' in decoded && decoded.problem).toMatch(problem);
  });

  it('reads the URL-safe alphabet too', () => {
    const b = Buffer.from('src_1::k>>>???').toString('base64url');
    expect(decodeWebhookKey(b)).toEqual({ sourceId: 'src_1', writeKey: 'k>>>???' });
  });
});

describe('the calls a run emitted', () => {
  it('gets a messageId from the request and its position, the same on every run, different for every call', () => {
    expect(emittedMessageId('req-1', 0)).toBe(emittedMessageId('req-1', 0));
    const ids = new Set(['req-1', 'req-2'].flatMap((r) => [0, 1, 2].map((i) => emittedMessageId(r, i))));
    expect(ids.size).toBe(6);
    expect(emittedMessageId('req-1', 0)).toMatch(/^fn-[0-9a-f]{32}$/);
  });

  const table: [string, unknown[], { type: string; fields: Record<string, unknown> }[], number][] = [
    [
      'a track and an identify, ids derived by position',
      [
        { type: 'track', message: { userId: 'u', event: 'E' } },
        { type: 'identify', message: { userId: 'u', traits: { a: 1 } } },
      ],
      [
        { type: 'track', fields: { userId: 'u', event: 'E', messageId: emittedMessageId('r', 0) } },
        { type: 'identify', fields: { userId: 'u', traits: { a: 1 }, messageId: emittedMessageId('r', 1) } },
      ],
      0,
    ],
    ['a messageId given is kept', [{ type: 'page', message: { anonymousId: 'a', name: 'Home', messageId: 'mine' } }], [{ type: 'page', fields: { anonymousId: 'a', name: 'Home', messageId: 'mine' } }], 0],
    [
      'only whitelisted fields, falsy ones dropped (as Segment drops them)',
      [{ type: 'track', message: { userId: 'u', event: 'E', extra: 1, timestamp: '', properties: { n: 0 }, context: null } }],
      [{ type: 'track', fields: { userId: 'u', event: 'E', properties: { n: 0 }, messageId: emittedMessageId('r', 0) } }],
      0,
    ],
    [
      'set objects counted, not ingested; positions still count',
      [
        { type: 'set', message: { collection: 'c', id: '1' } },
        { type: 'alias', message: { userId: 'u', previousId: 'p' } },
      ],
      [{ type: 'alias', fields: { userId: 'u', previousId: 'p', messageId: emittedMessageId('r', 1) } }],
      1,
    ],
  ];
  it.each(table)('%s', (_name, emitted, calls, objects) => {
    expect(emittedCalls('r', emitted)).toEqual({ calls, objects });
  });
});

describe("Segment's retry schedule", () => {
  const retry = { retries: 6, initialMs: 120_000, maximumMs: 1_200_000 };
  const table: [number, number, number][] = [
    [0, 0, 60_000],
    [0, 0.999, 179_880],
    [1, 0.5, 240_000],
    [2, 0.5, 480_000],
    [3, 0.5, 960_000],
    [4, 0.5, 1_200_000],
    [5, 0.999, 1_200_000],
  ];
  it.each(table)('retry %i with random %f waits %i ms', (attempt, random, wait) => {
    expect(retryDelayMs(retry, attempt, random)).toBe(wait);
  });
});

describe('what a source function that threw comes to', () => {
  const table: [string, boolean, { kind: string; reason: string }][] = [
    ['RetryError', false, { kind: 'retry', reason: 'function:retry: RetryError' }],
    ['Timeout', false, { kind: 'retry', reason: 'function:timeout: Timeout' }],
    ['RetryError', true, { kind: 'failed', reason: 'function:retry: RetryError (retries exhausted)' }],
    ['Timeout', true, { kind: 'failed', reason: 'function:timeout: Timeout (retries exhausted)' }],
    ['TypeError', false, { kind: 'failed', reason: 'function:error: TypeError' }],
    ['ValidationError', false, { kind: 'failed', reason: 'function:rejected: ValidationError' }],
    ['InvalidEventPayload', false, { kind: 'failed', reason: 'function:rejected: InvalidEventPayload' }],
    ['EventNotSupported', false, { kind: 'failed', reason: 'function:unsupported: EventNotSupported' }],
    ['MemoryLimit', false, { kind: 'failed', reason: 'function:error: MemoryLimit' }],
  ];
  it.each(table)('%s (last try: %p) → %p', (type, final, expected) => {
    expect(sourceDisposition(type, final)).toEqual(expected);
  });
});
