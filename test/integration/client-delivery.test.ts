/**
 * The client against a real HTTP server on 127.0.0.1 (node:http, port 0): every batch counted here
 * is a request that crossed a socket. No Temporal is needed; timing values are short and only
 * lower bounds the protocol promises (Retry-After) are asserted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { Analytics, AnalyticsError, MAX_BATCH_BYTES, type AnalyticsOptions, type Logger, type Message } from '../../src/client';

interface Received {
  headers: http.IncomingHttpHeaders;
  method: string;
  path: string;
  bytes: number;
  body: { batch: Message[]; sentAt: string };
  at: number;
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Answer only once this resolves (a slow or stuck server). */
  after?: Promise<unknown>;
  /** Drop the connection instead of answering (a network error). */
  hangUp?: boolean;
}

/** A batch endpoint that records every request and answers as the test says. */
class BatchServer {
  readonly requests: Received[] = [];
  reply: (index: number) => Reply = () => ({ status: 200, body: { success: true } });
  private server = http.createServer((req, res) => void this.handle(req, res));
  private waiters: { count: number; resolve: () => void }[] = [];

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Resolves once `count` requests have arrived in total. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  get messages(): Message[] {
    return this.requests.flatMap((r) => r.body.batch);
  }

  get batchSizes(): number[] {
    return this.requests.map((r) => r.body.batch.length);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await buffer(req);
    const index = this.requests.length;
    this.requests.push({ headers: req.headers, method: req.method ?? '', path: req.url ?? '', bytes: raw.length, body: JSON.parse(raw.toString('utf8')), at: Date.now() });
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) waiter.resolve();
    this.waiters = this.waiters.filter((w) => this.requests.length < w.count);
    const reply = this.reply(index);
    if (reply.after) await reply.after;
    if (reply.hangUp) return void req.socket.destroy();
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? (reply.status < 300 ? { success: true } : { code: 'error', message: 'failed' })));
  }
}

/** A gate a test opens when it wants the server to answer. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const silent: Logger = { debug: () => {}, warn: () => {}, error: () => {} };

let server: BatchServer;
let endpoint: string;
const clients: Analytics[] = [];

function client(options: Partial<AnalyticsOptions> = {}): Analytics {
  const analytics = new Analytics({ writeKey: 'test-write-key', endpoint, flushAfter: 60_000, backoff: { initial: 5, max: 20 }, logger: silent, ...options });
  clients.push(analytics);
  return analytics;
}

beforeEach(async () => {
  server = new BatchServer();
  endpoint = await server.start();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close({ timeout: 1_000 })));
  await server.stop();
});

/** Resolves once `count` messages have been acknowledged by the server. */
function deliveredCount(analytics: Analytics, count: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const listener = (messages: Message[]) => {
      seen += messages.length;
      if (seen >= count) {
        analytics.off('delivered', listener);
        resolve();
      }
    };
    analytics.on('delivered', listener);
  });
}

const track = (analytics: Analytics, n: number, extra: Record<string, unknown> = {}) =>
  Array.from({ length: n }, (_, i) => analytics.track({ userId: `user-${i}`, event: 'Order Completed', properties: { i, ...extra } }));

describe('the request', () => {
  it('is POST {endpoint}/v1/batch with Basic auth (write key, empty password) and a {batch, sentAt} JSON body', async () => {
    const analytics = client();
    const result = analytics.identify({ userId: 'u1', traits: { email: 'u1@example.com' } });
    await analytics.flush();

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/batch');
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('test-write-key:').toString('base64')}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^switchyard-client\/\d+\.\d+\.\d+/);
    expect(request.body.sentAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(request.body.batch).toEqual([
      {
        type: 'identify',
        messageId: result.ok && result.messageId,
        timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        userId: 'u1',
        traits: { email: 'u1@example.com' },
        context: { library: { name: 'switchyard-client', version: expect.any(String) } },
      },
    ]);
    expect(result.ok && result.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('carries every call type', async () => {
    const analytics = client();
    analytics.identify({ userId: 'u1' });
    analytics.track({ userId: 'u1', event: 'Clicked' });
    analytics.page({ anonymousId: 'a1', name: 'Home', properties: { path: '/' } });
    analytics.screen({ userId: 'u1', name: 'Settings' });
    analytics.group({ userId: 'u1', groupId: 'g1' });
    analytics.alias({ userId: 'u1', previousId: 'a1' });
    await analytics.flush();
    expect(server.messages.map((m) => m.type)).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias']);
  });

  it('sends the message as it was at the call, whatever the caller changes afterwards', async () => {
    const analytics = client();
    const properties: Record<string, unknown> = { items: ['a'], total: 10 };
    analytics.track({ userId: 'u1', event: 'Checkout', properties });
    properties.total = 99;
    (properties.items as string[]).push('b');
    await analytics.flush();
    expect(server.messages[0].properties).toEqual({ items: ['a'], total: 10 });
  });
});

describe('batching', () => {
  it('sends a batch as soon as flushAt messages are queued, and no more than flushAt per request', async () => {
    const analytics = client({ flushAt: 5 });
    const tenDelivered = deliveredCount(analytics, 10);
    track(analytics, 12);
    await tenDelivered;
    expect(server.batchSizes).toEqual([5, 5]);
    expect(analytics.pending).toBe(2);

    await analytics.flush();
    expect(server.batchSizes).toEqual([5, 5, 2]);
    expect(server.messages.map((m) => m.userId)).toEqual(Array.from({ length: 12 }, (_, i) => `user-${i}`));
  });

  it('flushAt 1 sends every call on its own', async () => {
    const analytics = client({ flushAt: 1 });
    track(analytics, 3);
    await server.waitForRequests(3);
    expect(server.batchSizes).toEqual([1, 1, 1]);
  });

  it('sends a partial batch once flushAfter has passed', async () => {
    const analytics = client({ flushAt: 100, flushAfter: 50 });
    track(analytics, 3);
    expect(server.requests).toHaveLength(0);
    await server.waitForRequests(1);
    expect(server.batchSizes).toEqual([3]);

    // The clock restarts after a flush: later messages get their own timed batch.
    track(analytics, 2);
    await server.waitForRequests(2);
    expect(server.batchSizes).toEqual([3, 2]);
  });

  it('sends a batch before it would pass 500 KB, and never sends a larger one', async () => {
    const analytics = client({ flushAt: 1_000 });
    const blob = 'x'.repeat(30_000);
    track(analytics, 40, { blob });
    // 40 messages of ~30 KB fill two 500 KB batches without waiting for flushAfter.
    await server.waitForRequests(2);
    await analytics.flush();

    expect(server.messages).toHaveLength(40);
    expect(server.batchSizes.length).toBe(3);
    for (const request of server.requests) expect(request.bytes).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    // The first two were full: the next message (plus its comma) would have passed the limit.
    for (const i of [0, 1]) {
      const next = server.requests[i + 1].body.batch[0];
      expect(server.requests[i].bytes + 1 + Buffer.byteLength(JSON.stringify(next))).toBeGreaterThan(MAX_BATCH_BYTES);
    }
  });
});

describe('validation at the call', () => {
  it('refuses a message over 32 KB with its size, and sends nothing for it', async () => {
    const analytics = client();
    const callback = jest.fn();
    const result = analytics.track({ userId: 'u1', event: 'Huge', properties: { blob: 'x'.repeat(40_000) } }, callback);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(AnalyticsError);
    expect(result.error.code).toBe('message_too_large');
    expect(result.error.size).toBeGreaterThan(40_000);
    expect(result.error.message).toMatch(/is \d+ bytes encoded; a message may be at most 32768 bytes/);

    await analytics.flush();
    expect(server.requests).toHaveLength(0);
    expect(callback).toHaveBeenCalledWith(result.error);
  });

  it('returns invalid calls as errors, without throwing and without queueing them', async () => {
    const analytics = client();
    const failed = jest.fn();
    analytics.on('failed', failed);
    const results = [
      analytics.track({ userId: 'u1' } as never),
      analytics.identify({ traits: { a: 1 } } as never),
      analytics.group({ userId: 'u1' } as never),
      analytics.alias({ userId: 'u1' } as never),
    ];
    expect(results.map((r) => !r.ok && `${r.error.code} ${r.error.field}`)).toEqual([
      'invalid_message event',
      'invalid_message userId',
      'invalid_message groupId',
      'invalid_message previousId',
    ]);
    expect(analytics.pending).toBe(0);
    await analytics.flush();
    expect(failed).toHaveBeenCalledTimes(4);
    expect(server.requests).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries a 503 and delivers the same messages, stamping sentAt per attempt', async () => {
    server.reply = (i) => (i === 0 ? { status: 503, body: { code: 'temporal_unavailable', message: 'retry later' } } : { status: 200 });
    const analytics = client();
    const callback = jest.fn();
    track(analytics, 2).forEach(() => {});
    analytics.track({ userId: 'u9', event: 'Retried' }, callback);
    const result = await analytics.flush();

    expect(result).toEqual({ delivered: 3, failed: 0 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].body.batch).toEqual(server.requests[0].body.batch);
    expect(server.requests.every((r) => typeof r.body.sentAt === 'string')).toBe(true);
    expect(callback).toHaveBeenCalledTimes(1);
    expect(callback).toHaveBeenCalledWith(undefined);
  });

  it('does not retry a 400, and reports the server’s code and message', async () => {
    server.reply = () => ({ status: 400, body: { code: 'invalid_request', message: 'batch[0].userId: is required' } });
    const analytics = client();
    const callback = jest.fn();
    const failed = jest.fn();
    analytics.on('failed', failed);
    analytics.track({ userId: 'u1', event: 'Bad' }, callback);
    const result = await analytics.flush();

    expect(result).toEqual({ delivered: 0, failed: 1 });
    expect(server.requests).toHaveLength(1);
    const error: AnalyticsError = callback.mock.calls[0][0];
    expect(error.code).toBe('rejected');
    expect(error.status).toBe(400);
    expect(error.message).toContain('400 invalid_request: batch[0].userId: is required');
    expect(failed).toHaveBeenCalledWith(error, [expect.objectContaining({ event: 'Bad' })]);
  });

  it('waits at least the Retry-After of a 429 before trying again', async () => {
    server.reply = (i) => (i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 });
    const analytics = client({ backoff: { initial: 1, max: 1 } });
    track(analytics, 1);
    const result = await analytics.flush();

    expect(result).toEqual({ delivered: 1, failed: 0 });
    expect(server.requests).toHaveLength(2);
    // Timer and clock granularity: Node may fire a 1000 ms timer a millisecond early by Date.now().
    expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(990);
  });

  it('retries dropped connections and gives up after maxRetries, reporting the last cause', async () => {
    server.reply = () => ({ status: 0, hangUp: true });
    const analytics = client({ maxRetries: 2 });
    const callback = jest.fn();
    analytics.track({ userId: 'u1', event: 'Lost' }, callback);
    const result = await analytics.flush();

    expect(result).toEqual({ delivered: 0, failed: 1 });
    expect(server.requests).toHaveLength(3);
    const error: AnalyticsError = callback.mock.calls[0][0];
    expect(error.code).toBe('retries_exhausted');
    expect(error.attempts).toBe(3);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('bounds each attempt by timeout and retries it', async () => {
    const stuck = gate();
    server.reply = (i) => (i === 0 ? { status: 200, after: stuck.opened } : { status: 200 });
    const analytics = client({ timeout: 100 });
    track(analytics, 1);
    const result = await analytics.flush();
    stuck.open();

    expect(result).toEqual({ delivered: 1, failed: 0 });
    expect(server.requests).toHaveLength(2);
  });

  it('reports a timeout as the cause when every attempt times out', async () => {
    const stuck = gate();
    server.reply = () => ({ status: 200, after: stuck.opened });
    const analytics = client({ timeout: 50, maxRetries: 1 });
    const callback = jest.fn();
    analytics.track({ userId: 'u1', event: 'Slow' }, callback);
    await analytics.flush();
    stuck.open();
    expect(callback.mock.calls[0][0]).toMatchObject({ code: 'retries_exhausted', attempts: 2, message: expect.stringContaining('no complete answer within 50 ms') });
  });
});

describe('flush() and close()', () => {
  it('flush() resolves only once the server has acknowledged what was queued', async () => {
    const held = gate();
    server.reply = () => ({ status: 200, after: held.opened });
    const analytics = client();
    track(analytics, 3);
    let settled = false;
    const flushed = analytics.flush().then((result) => {
      settled = true;
      return result;
    });
    await server.waitForRequests(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);

    held.open();
    expect(await flushed).toEqual({ delivered: 3, failed: 0 });
  });

  it('flush() with nothing queued resolves at once', async () => {
    await expect(client().flush()).resolves.toEqual({ delivered: 0, failed: 0 });
  });

  it('flush() waits for messages queued before it, not for later ones', async () => {
    const first = gate();
    server.reply = (i) => (i === 0 ? { status: 200, after: first.opened } : { status: 200 });
    const analytics = client({ flushAt: 2 });
    track(analytics, 2);
    const flushed = analytics.flush();
    track(analytics, 1);
    first.open();
    expect(await flushed).toEqual({ delivered: 2, failed: 0 });
    expect(analytics.pending).toBe(1);
  });

  it('close() delivers what is queued, is idempotent, and refuses later calls with an error', async () => {
    const analytics = client();
    track(analytics, 4);
    const first = analytics.close();
    const second = analytics.close();
    expect(second).toBe(first);
    expect(await first).toEqual({ delivered: 4, failed: 0 });
    await expect(analytics.close()).resolves.toEqual({ delivered: 4, failed: 0 });
    expect(server.messages).toHaveLength(4);

    const callback = jest.fn();
    const late = analytics.track({ userId: 'u1', event: 'Late' }, callback);
    expect(late).toMatchObject({ ok: false, error: { code: 'client_closed' } });
    await expect(analytics.flush()).resolves.toEqual({ delivered: 0, failed: 0 });
    expect(callback).toHaveBeenCalledWith(expect.objectContaining({ code: 'client_closed' }));
    expect(server.requests).toHaveLength(1);
  });

  it('close({ timeout }) gives up on a stuck server and reports what was abandoned', async () => {
    const stuck = gate();
    server.reply = () => ({ status: 200, after: stuck.opened });
    const analytics = client({ flushAt: 2 });
    const callbacks = Array.from({ length: 3 }, () => jest.fn());
    callbacks.forEach((callback, i) => analytics.track({ userId: `u${i}`, event: 'Stuck' }, callback));
    const result = await analytics.close({ timeout: 100 });
    stuck.open();

    expect(result).toEqual({ delivered: 0, failed: 3 });
    for (const callback of callbacks) expect(callback).toHaveBeenCalledWith(expect.objectContaining({ code: 'close_timeout' }));
  });

  it('close({ timeout }) cuts a backoff wait short', async () => {
    server.reply = () => ({ status: 503 });
    const analytics = client({ backoff: { initial: 60_000, max: 60_000 } });
    track(analytics, 1);
    const result = await analytics.close({ timeout: 200 });
    expect(result).toEqual({ delivered: 0, failed: 1 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('bounded queue', () => {
  it('refuses new messages with queue_full once maxQueueSize are held, and accepts again after delivery', async () => {
    const held = gate();
    server.reply = () => ({ status: 200, after: held.opened });
    const analytics = client({ flushAt: 2, maxQueueSize: 4 });
    const accepted = track(analytics, 4);
    expect(accepted.every((r) => r.ok)).toBe(true);
    await server.waitForRequests(1);

    const callback = jest.fn();
    const refused = analytics.track({ userId: 'u5', event: 'Overflow' }, callback);
    expect(refused).toMatchObject({ ok: false, error: { code: 'queue_full' } });
    expect(analytics.pending).toBe(4);

    held.open();
    expect(await analytics.flush()).toEqual({ delivered: 4, failed: 0 });
    expect(callback).toHaveBeenCalledWith(expect.objectContaining({ code: 'queue_full' }));
    expect(analytics.track({ userId: 'u6', event: 'Room again' }).ok).toBe(true);
    await analytics.flush();
    expect(server.messages.map((m) => m.userId)).toEqual(['user-0', 'user-1', 'user-2', 'user-3', 'u6']);
  });
});

describe('reporting each message’s fate', () => {
  it('calls each callback once and emits delivered with the messages', async () => {
    const analytics = client({ flushAt: 2 });
    const delivered: Message[][] = [];
    analytics.on('delivered', (messages) => delivered.push(messages));
    const callbacks = Array.from({ length: 3 }, () => jest.fn());
    const ids = callbacks.map((callback, i) => {
      const result = analytics.track({ userId: `u${i}`, event: 'E' }, callback);
      return result.ok ? result.messageId : '';
    });
    await analytics.flush();
    for (const callback of callbacks) expect(callback.mock.calls).toEqual([[undefined]]);
    expect(delivered.flat().map((m) => m.messageId)).toEqual(ids);
  });

  it('keeps delivering when a callback or listener throws', async () => {
    const errors: string[] = [];
    const analytics = client({ logger: { ...silent, error: (message) => errors.push(message) } });
    analytics.on('delivered', () => {
      throw new Error('listener bug');
    });
    analytics.track({ userId: 'u1', event: 'A' }, () => {
      throw new Error('callback bug');
    });
    analytics.track({ userId: 'u2', event: 'B' });
    await expect(analytics.flush()).resolves.toEqual({ delivered: 2, failed: 0 });
    expect(errors).toEqual(expect.arrayContaining([expect.stringContaining('callback threw'), expect.stringContaining("'delivered' listener threw")]));
  });
});

describe('DEBUG=analytics', () => {
  const previous = process.env.DEBUG;
  afterEach(() => {
    if (previous === undefined) delete process.env.DEBUG;
    else process.env.DEBUG = previous;
  });

  const capture = () => {
    const lines: string[] = [];
    return { lines, logger: { debug: (message: string) => lines.push(message), warn: () => {}, error: () => {} } };
  };

  it('turns on debug lines about queueing, sending and acknowledgement', async () => {
    process.env.DEBUG = 'analytics';
    const { lines, logger } = capture();
    const analytics = client({ logger });
    track(analytics, 1);
    await analytics.flush();
    expect(lines).toEqual(expect.arrayContaining(['client ready', 'queued', 'flush requested', 'sending batch', 'batch delivered']));
  });

  it('leaves debug lines off otherwise', async () => {
    delete process.env.DEBUG;
    const { lines, logger } = capture();
    const analytics = client({ logger });
    track(analytics, 1);
    await analytics.flush();
    expect(lines).toEqual([]);
  });
});
