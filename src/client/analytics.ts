import { randomUUID } from 'node:crypto';
import { Agent, type Dispatcher } from 'undici';
import { encodeBatch, MessageQueue } from './batcher/queue';
import { AnalyticsError } from './errors';
import { Listeners, type AnalyticsEvents } from './events';
import { LIBRARY } from './library';
import { MAX_BATCH_BYTES } from './limits';
import { createLog, isDebugEnabled, stderrLogger, type Logger } from './logger';
import { resolveOptions, type AnalyticsOptions, type ResolvedOptions } from './options';
import { classifyAttempt, parseRetryAfter, retryDelay } from './retry';
import { describeReply, postBatch } from './transport';
import type {
  AliasMessage,
  GroupMessage,
  IdentifyMessage,
  Message,
  MessageType,
  PageMessage,
  ScreenMessage,
  TrackMessage,
} from './types';
import { encodeMessage, prepareMessage, type Stamp } from './validate';

/** Called once per call with its message's fate: no error when the server acknowledged it. */
export type DeliveryCallback = (error?: AnalyticsError) => void;

/** What a call returns at once: the message was queued, or it was refused and why. */
export type EnqueueResult = { ok: true; messageId: string } | { ok: false; error: AnalyticsError };

/** How the messages a `flush()` or `close()` waited for ended. */
export interface FlushResult {
  delivered: number;
  failed: number;
}

export interface CloseOptions {
  /** Milliseconds to keep delivering; then in-flight work is abandoned and reported as `close_timeout`. Default: no limit. */
  timeout?: number;
}

/** Why a batch left the queue, for debug lines. */
type FlushReason = 'count' | 'bytes' | 'time' | 'flush' | 'close';

interface Entry {
  seq: number;
  messageId: string;
  json: string;
  bytes: number;
  callback?: DeliveryCallback;
  settled: boolean;
}

interface Waiter {
  upTo: number;
  result: FlushResult;
  resolve: (result: FlushResult) => void;
}

/**
 * A batching client for Switchyard's ingestion API (Segment's Tracking API). Calls validate and
 * queue a snapshot of the message and return at once; a single background sender posts batches
 * to `{endpoint}/v1/batch`, one request at a time, oldest messages first.
 */
export class Analytics {
  private readonly options: ResolvedOptions;
  private readonly log: Logger;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly listeners: Listeners<AnalyticsEvents>;
  private readonly stamp: Stamp = { now: () => new Date(), newMessageId: randomUUID, library: LIBRARY };
  private readonly queue = new MessageQueue<Entry>();
  /** The batch being sent or waiting to be retried. */
  private inFlight: Entry[] = [];
  private nextSeq = 1;
  /** `flush()`/`close()` asked for every message up to this sequence number to be sent now. */
  private flushThrough = 0;
  private waiters: Waiter[] = [];
  private senderRunning = false;
  private flushTimer?: NodeJS.Timeout;
  private flushTimerDue = false;
  private backoffTimer?: NodeJS.Timeout;
  private closing?: Promise<FlushResult>;
  /** Aborted only when `close({ timeout })` runs out: cuts the current request and backoff short. */
  private readonly shutdown = new AbortController();
  /** Calls refused since the queue filled up, for one warning per episode instead of one per call. */
  private refusedWhileFull = 0;
  private refusedAfterClose = 0;

  constructor(options: AnalyticsOptions) {
    this.options = resolveOptions(options);
    this.log = createLog(options.logger ?? stderrLogger, isDebugEnabled(process.env.DEBUG));
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent();
    this.listeners = new Listeners((event, err) => this.log.error(`a '${String(event)}' listener threw; the client carries on`, { error: errorText(err) }));
    const { batchUrl, flushAt, flushAfter, maxQueueSize } = this.options;
    this.log.debug('client ready', { batchUrl, flushAt, flushAfter, maxQueueSize });
  }

  identify(message: IdentifyMessage, callback?: DeliveryCallback): EnqueueResult {
    return this.enqueue('identify', message, callback);
  }

  track(message: TrackMessage, callback?: DeliveryCallback): EnqueueResult {
    return this.enqueue('track', message, callback);
  }

  page(message: PageMessage, callback?: DeliveryCallback): EnqueueResult {
    return this.enqueue('page', message, callback);
  }

  screen(message: ScreenMessage, callback?: DeliveryCallback): EnqueueResult {
    return this.enqueue('screen', message, callback);
  }

  group(message: GroupMessage, callback?: DeliveryCallback): EnqueueResult {
    return this.enqueue('group', message, callback);
  }

  alias(message: AliasMessage, callback?: DeliveryCallback): EnqueueResult {
    return this.enqueue('alias', message, callback);
  }

  on<K extends keyof AnalyticsEvents>(event: K, listener: AnalyticsEvents[K]): this {
    this.listeners.add(event, listener);
    return this;
  }

  off<K extends keyof AnalyticsEvents>(event: K, listener: AnalyticsEvents[K]): this {
    this.listeners.remove(event, listener);
    return this;
  }

  /** Messages accepted and not yet delivered or failed (queued, in flight, or waiting to retry). */
  get pending(): number {
    return this.queue.length + this.inFlight.filter((entry) => !entry.settled).length;
  }

  /**
   * Sends everything queued so far without waiting for `flushAt` or `flushAfter`, and resolves
   * once each of those messages is acknowledged or has failed for good (retries included). Never
   * rejects; failures are counted in the result and reported per message.
   */
  flush(): Promise<FlushResult> {
    const upTo = this.nextSeq - 1;
    if (this.oldestUnsettled() > upTo) return Promise.resolve({ delivered: 0, failed: 0 });
    this.flushThrough = Math.max(this.flushThrough, upTo);
    // An awaited flush must not be lost to a process exiting during a backoff wait.
    this.backoffTimer?.ref();
    this.log.debug('flush requested', { messages: this.pending });
    const done = new Promise<FlushResult>((resolve) => this.waiters.push({ upTo, result: { delivered: 0, failed: 0 }, resolve }));
    this.wakeSender();
    return done;
  }

  /**
   * Stops accepting calls, delivers everything already queued, releases the connection pool.
   * Idempotent: every call returns the first call's promise. With `timeout`, whatever is not
   * acknowledged by then fails with `close_timeout` and the promise resolves. Never rejects.
   */
  close(options: CloseOptions = {}): Promise<FlushResult> {
    if (!this.closing) {
      const { timeout } = options;
      if (timeout !== undefined && !(typeof timeout === 'number' && timeout >= 0)) {
        throw new TypeError(`close() option timeout: must be a number of milliseconds of at least 0, got ${JSON.stringify(timeout)}`);
      }
      this.closing = this.shutDown(timeout);
    }
    return this.closing;
  }

  private enqueue(type: MessageType, input: unknown, callback?: DeliveryCallback): EnqueueResult {
    const prepared = prepareMessage(type, input, this.stamp);
    if (!prepared.ok) return this.refuse(prepared.error, undefined, callback);
    const message = prepared.value;
    if (this.closing) {
      return this.refuse(new AnalyticsError('client_closed', `${type} called after close(); message ${message.messageId} was not queued`), message, callback);
    }
    const encoded = encodeMessage(message);
    if (!encoded.ok) return this.refuse(encoded.error, message, callback);

    // Overflow policy: refuse the newest message. Everything already accepted keeps its chance of
    // delivery, and the caller learns at once that this one has none.
    const held = this.pending;
    if (held >= this.options.maxQueueSize) {
      const error = new AnalyticsError('queue_full', `queue is full (${held} messages waiting, maxQueueSize ${this.options.maxQueueSize}); ${type} ${message.messageId} was refused`);
      return this.refuse(error, message, callback);
    }
    if (this.refusedWhileFull > 0) {
      this.log.warn('queue has room again', { refusedWhileFull: this.refusedWhileFull });
      this.refusedWhileFull = 0;
    }

    this.queue.push({ seq: this.nextSeq++, messageId: message.messageId, json: encoded.value.json, bytes: encoded.value.bytes, callback, settled: false });
    this.log.debug('queued', { type, messageId: message.messageId, bytes: encoded.value.bytes, queued: this.queue.length });
    this.armFlushTimer();
    if (this.flushReason()) this.wakeSender();
    return { ok: true, messageId: message.messageId };
  }

  /**
   * Reports a refused call: returned now, and to callback and listeners on a microtask, so never
   * inside the call, yet before a `flush()` awaited right after it resolves.
   */
  private refuse(error: AnalyticsError, message: Message | undefined, callback?: DeliveryCallback): EnqueueResult {
    if (error.code === 'queue_full') {
      if (this.refusedWhileFull++ === 0) this.log.warn(`${error.message}; further refusals are counted until there is room`, { code: error.code });
    } else if (error.code === 'client_closed') {
      // Code that keeps calling after shutdown would otherwise fill the log; the first says it all.
      if (this.refusedAfterClose++ === 0) this.log.warn(`${error.message}; later calls after close() are refused without a warning`, { code: error.code });
      else this.log.debug(error.message, { code: error.code });
    } else {
      this.log.warn(error.message, { code: error.code });
    }
    if (callback || this.listeners.has('failed')) {
      queueMicrotask(() => {
        if (callback) this.runCallback(callback, error);
        this.listeners.emit('failed', error, message ? [message] : []);
      });
    }
    return { ok: false, error };
  }

  private flushReason(): FlushReason | undefined {
    const oldest = this.queue.peek();
    if (!oldest) return undefined;
    if (oldest.seq <= this.flushThrough) return this.closing ? 'close' : 'flush';
    if (this.queue.length >= this.options.flushAt) return 'count';
    if (this.queue.exceedsOneBatch(MAX_BATCH_BYTES)) return 'bytes';
    if (this.flushTimerDue) return 'time';
    return undefined;
  }

  /** Starts the background sender on the next microtask, so a burst of calls fills the batch first. */
  private wakeSender(): void {
    if (this.senderRunning) return;
    this.senderRunning = true;
    queueMicrotask(() => void this.runSender());
  }

  /** The only sender: one batch at a time, so a struggling server sees one request, not a stampede. */
  private async runSender(): Promise<void> {
    try {
      for (let reason = this.flushReason(); reason; reason = this.flushReason()) {
        const batch = this.queue.take(this.options.flushAt, MAX_BATCH_BYTES);
        this.restartFlushTimer();
        this.inFlight = batch;
        await this.send(batch, reason);
        this.inFlight = [];
      }
    } catch (err) {
      this.log.error('unexpected error in the background sender; please report it', { error: errorText(err) });
    } finally {
      this.senderRunning = false;
    }
  }

  /** Posts one batch until it is delivered, refused, out of retries, or abandoned by close(). */
  private async send(batch: Entry[], reason: FlushReason): Promise<void> {
    const { batchUrl, writeKey, timeout, maxRetries, backoff } = this.options;
    const messages = batch.map((entry) => entry.json);
    for (let attempt = 1; ; attempt++) {
      // sentAt is stamped per attempt: the server subtracts (sentAt - timestamp) from its own clock.
      const body = encodeBatch(messages, this.stamp.now().toISOString());
      this.log.debug('sending batch', { reason, messages: batch.length, bytes: Buffer.byteLength(body), attempt });
      const result = await postBatch({ url: batchUrl, writeKey, body, timeout, dispatcher: this.dispatcher, signal: this.shutdown.signal });
      if (result.kind === 'aborted') return;
      const verdict = classifyAttempt(result);
      const status = result.kind === 'response' ? result.status : undefined;
      if (verdict === 'delivered') {
        this.log.debug('batch delivered', { status, messages: batch.length, attempt });
        this.settle(batch);
        return;
      }
      const outcome = result.kind === 'response' ? describeReply(result.status, result.body) : result.error.message;
      if (verdict === 'fail') {
        const error = new AnalyticsError('rejected', `the server refused a batch of ${batch.length} messages: ${outcome}`, { status, attempts: attempt });
        this.log.error(error.message, { code: error.code, status });
        this.settle(batch, error);
        return;
      }
      if (attempt > maxRetries) {
        const cause = result.kind === 'network_error' ? result.error : undefined;
        const error = new AnalyticsError('retries_exhausted', `gave up on a batch of ${batch.length} messages after ${attempt} attempts; the last one ended with ${outcome}`, { status, attempts: attempt, cause });
        this.log.error(error.message, { code: error.code, status });
        this.settle(batch, error);
        return;
      }
      const retryAfterMs = result.kind === 'response' ? parseRetryAfter(result.retryAfter, this.stamp.now().getTime()) : undefined;
      const delay = retryDelay(attempt, backoff, retryAfterMs, Math.random());
      this.log.debug('batch will be retried', { outcome, attempt, delayMs: delay, retryAfterMs });
      if (!(await this.backoffWait(delay))) return;
    }
  }

  /** Records messages' fate once: callbacks, listeners, and any flush() waiting for them. */
  private settle(entries: Entry[], error?: AnalyticsError): void {
    const fresh = entries.filter((entry) => !entry.settled);
    if (fresh.length === 0) return;
    for (const entry of fresh) entry.settled = true;
    for (const waiter of this.waiters) {
      const counted = fresh.filter((entry) => entry.seq <= waiter.upTo).length;
      if (error) waiter.result.failed += counted;
      else waiter.result.delivered += counted;
    }
    for (const entry of fresh) if (entry.callback) this.runCallback(entry.callback, error);
    if (error ? this.listeners.has('failed') : this.listeners.has('delivered')) {
      const messages = fresh.map((entry) => JSON.parse(entry.json) as Message);
      if (error) this.listeners.emit('failed', error, messages);
      else this.listeners.emit('delivered', messages);
    }
    const oldest = this.oldestUnsettled();
    const done = this.waiters.filter((waiter) => waiter.upTo < oldest);
    this.waiters = this.waiters.filter((waiter) => waiter.upTo >= oldest);
    for (const waiter of done) waiter.resolve(waiter.result);
    if (this.waiters.length === 0 && !this.closing) this.backoffTimer?.unref();
  }

  /** Sending is oldest-first and one batch at a time, so everything older than this is settled. */
  private oldestUnsettled(): number {
    return this.inFlight.find((entry) => !entry.settled)?.seq ?? this.queue.peek()?.seq ?? this.nextSeq;
  }

  private runCallback(callback: DeliveryCallback, error: AnalyticsError | undefined): void {
    try {
      callback(error);
    } catch (err) {
      this.log.error('a delivery callback threw; the client carries on', { error: errorText(err) });
    }
  }

  /** Seed: flush when `flushAfter` has passed since the last flush. Unref'd: it never holds the process open. */
  private armFlushTimer(): void {
    if (this.flushTimer || this.flushTimerDue || this.queue.length === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushTimerDue = true;
      this.wakeSender();
    }, this.options.flushAfter);
    this.flushTimer.unref();
  }

  private restartFlushTimer(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushTimerDue = false;
    this.armFlushTimer();
  }

  /** Resolves true after `ms`, or false at once if close() gave up. Holds the process open only while someone awaits. */
  private backoffWait(ms: number): Promise<boolean> {
    const { signal } = this.shutdown;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        this.backoffTimer = undefined;
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        this.backoffTimer = undefined;
        resolve(true);
      }, ms);
      if (this.waiters.length === 0 && !this.closing) timer.unref();
      this.backoffTimer = timer;
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private async shutDown(timeout: number | undefined): Promise<FlushResult> {
    this.log.debug('closing', { pending: this.pending, timeout });
    this.backoffTimer?.ref();
    const flushed = this.flush();
    if (timeout !== undefined) {
      let deadline: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => {
        deadline = setTimeout(() => resolve('expired'), timeout);
      });
      const first = await Promise.race([flushed, expired]);
      clearTimeout(deadline);
      if (first === 'expired') {
        this.shutdown.abort();
        const abandoned = [...this.inFlight, ...this.queue.drain()].filter((entry) => !entry.settled);
        const error = new AnalyticsError('close_timeout', `close() gave up after ${timeout} ms; ${abandoned.length} messages were not acknowledged`);
        if (abandoned.length > 0) this.log.error(error.message, { code: error.code });
        this.settle(abandoned, error);
      }
    }
    const result = await flushed;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.ownsDispatcher) {
      await (this.shutdown.signal.aborted ? this.dispatcher.destroy() : this.dispatcher.close()).catch((err: unknown) =>
        this.log.warn('could not close the connection pool', { error: errorText(err) }),
      );
    }
    this.log.debug('closed', { ...result });
    return result;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
