import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ThreadData } from './sandbox-thread';
import type { FetchAnswer, FetchRequest, FromThread, Invocation, InvocationOutcome, ToThread, TracedRequest } from './types';

/**
 * The one place user functions run: a few worker threads, each with QuickJS sessions
 * (sandbox-session.ts), called from the process that delivers messages without blocking its event
 * loop. Every invocation has a watchdog: a thread that has not answered by the time limit plus a
 * short grace (a long native operation inside QuickJS, which no interrupt reaches) is terminated
 * and replaced, and the invocation ends as a Timeout. The rest of the process never waits on it.
 */

export interface SandboxOptions {
  threads: number;
  timeoutMs: number;
  memoryBytes: number;
  /** The longest JSON a handler may return. */
  outputLimit: number;
  maxSessionsPerThread?: number;
  /** How long past the limit a silent thread is given before it is terminated. */
  graceMs?: number;
  /** Sends a function's request (through the egress guard), within `timeoutMs`. */
  fetch: (request: FetchRequest, timeoutMs: number) => Promise<FetchAnswer>;
}

export interface SandboxResult extends InvocationOutcome {
  requests: TracedRequest[];
}

interface Call {
  id: number;
  invocation: Invocation;
  timeoutMs: number;
  requests: TracedRequest[];
  resolve: (result: SandboxResult) => void;
}

const THREAD_FILE = path.join(__dirname, `sandbox-thread${path.extname(__filename)}`);

class Slot {
  private worker: Worker | undefined;
  /** A new thread loads TypeScript and QuickJS first; no call's clock starts before it is ready. */
  private ready = false;
  private current: { call: Call; deadline: number; watchdog: NodeJS.Timeout } | undefined;
  private readonly queue: Call[] = [];

  constructor(private readonly options: SandboxOptions) {}

  push(call: Call): void {
    this.queue.push(call);
    this.next();
  }

  private start(): Worker {
    const data: ThreadData = { memoryBytes: this.options.memoryBytes, outputLimit: this.options.outputLimit, maxSessions: this.options.maxSessionsPerThread ?? 32 };
    // Under tsx or Jest the thread's own file is TypeScript: the thread loads it through tsx's
    // require hook (a built Switchyard runs the compiled .js file as it is).
    const entry = THREAD_FILE.endsWith('.ts') ? `require('tsx/cjs'); require(${JSON.stringify(THREAD_FILE)});` : THREAD_FILE;
    const worker = new Worker(entry, {
      eval: THREAD_FILE.endsWith('.ts'),
      workerData: data,
      // Bounds the thread's own JavaScript heap; each session's WebAssembly memory has its own limit.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: false,
      stderr: false,
    });
    worker.on('message', (message: FromThread) => this.onMessage(worker, message));
    worker.on('error', () => undefined);
    worker.on('exit', () => this.onExit(worker));
    return worker;
  }

  private next(): void {
    if (this.current) return;
    // An idle thread does not keep the process alive; a busy one (or one starting for a call) does.
    if (this.queue.length === 0) {
      this.worker?.unref();
      return;
    }
    if (!this.worker) {
      this.ready = false;
      this.worker = this.start();
    }
    this.worker.ref();
    if (!this.ready) return;
    const call = this.queue.shift()!;
    const deadline = Date.now() + call.timeoutMs;
    const watchdog = setTimeout(() => this.stuck(), call.timeoutMs + (this.options.graceMs ?? 50));
    this.current = { call, deadline, watchdog };
    const message: ToThread = { kind: 'invoke', id: call.id, invocation: call.invocation, timeoutMs: call.timeoutMs };
    this.worker.postMessage(message);
  }

  private finish(outcome: InvocationOutcome): void {
    const current = this.current;
    if (!current) return;
    clearTimeout(current.watchdog);
    this.current = undefined;
    current.call.resolve({ ...outcome, requests: current.call.requests });
    this.next();
  }

  private onMessage(worker: Worker, message: FromThread): void {
    if (worker !== this.worker) return;
    if (message.kind === 'ready') {
      this.ready = true;
      this.next();
      return;
    }
    if (message.kind === 'done') {
      if (this.current?.call.id === message.id) this.finish(message.outcome);
      return;
    }
    const current = this.current;
    if (!current || current.call.id !== message.invocationId) {
      worker.postMessage({ kind: 'fetched', id: message.id, answer: { error: 'the invocation has ended' } } satisfies ToThread);
      return;
    }
    const started = Date.now();
    const traced: TracedRequest = { method: message.request.method, url: message.request.url, status: null, durationMs: 0 };
    current.call.requests.push(traced);
    void this.options.fetch(message.request, Math.max(1, current.deadline - started)).then(
      (answer) => {
        traced.durationMs = Date.now() - started;
        if (answer.error === undefined) traced.status = answer.status;
        else traced.error = answer.error;
        if (worker === this.worker) worker.postMessage({ kind: 'fetched', id: message.id, answer } satisfies ToThread);
      },
      () => undefined,
    );
  }

  /** The thread did not answer in time: it is stopped, and the next call gets a new one. */
  private stuck(): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.finish({ status: 'error', error: { type: 'Timeout', message: `the function ran over its ${this.current?.call.timeoutMs} ms limit` }, logs: [], durationMs: this.current?.call.timeoutMs ?? 0 });
  }

  private onExit(worker: Worker): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    if (!this.current) {
      // The thread could not start: the first waiting call fails rather than waiting for ever.
      const call = this.queue.shift();
      call?.resolve({ status: 'error', error: { type: 'Error', message: 'the sandbox thread could not start' }, logs: [], durationMs: 0, requests: [] });
      this.next();
      return;
    }
    // Out of heap, or a crash: the call in flight fails, and the next call gets a new thread.
    this.finish({ status: 'error', error: { type: 'MemoryLimit', message: 'the sandbox thread running the function stopped (out of memory)' }, logs: [], durationMs: 0 });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}

export class SandboxPool {
  private readonly slots: Slot[];
  private nextId = 1;

  constructor(private readonly options: SandboxOptions) {
    this.slots = Array.from({ length: Math.max(1, options.threads) }, () => new Slot(options));
  }

  /** Runs one invocation; never rejects: every failure is an outcome with an error. */
  run(invocation: Invocation, timeoutMs = this.options.timeoutMs): Promise<SandboxResult> {
    return new Promise((resolve) => {
      const slot = this.slots[hash(invocation.sessionKey) % this.slots.length];
      slot.push({ id: this.nextId++, invocation, timeoutMs, requests: [], resolve });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.close()));
  }
}

/** The same session always lands on the same thread, where its module state lives. */
function hash(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return Math.abs(h);
}
