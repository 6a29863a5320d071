import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { newQuickJSModule } from './quickjs-module';
import { PRELUDE } from './prelude';
import type { FetchAnswer, FetchRequest, InvocationOutcome } from './types';

/**
 * One function's module state inside a sandbox thread: its own QuickJS WebAssembly instance, with
 * the prelude and the user's script evaluated once, kept while the instance and version run. Each
 * session has a WebAssembly memory of its own, so a session that ran out of time or memory is
 * simply dropped (its whole heap goes with it) and the next call starts a fresh one.
 */

const DIGESTS = new Set(['md5', 'sha1', 'sha256', 'sha512']);
const ENCODINGS = new Set(['utf8', 'utf-8', 'latin1', 'binary', 'base64', 'base64url', 'hex', 'ascii', 'ucs2', 'utf16le']);
/** Segment shows 4 KB of an invocation's console output; the rest is cut with a note. */
export const LOG_LIMIT = 4096;

let lodashSource: string | undefined;
const lodash = () => (lodashSource ??= readFileSync(require.resolve('lodash/lodash.min.js'), 'utf8'));

export interface SessionLimits {
  memoryBytes: number;
  /** The longest JSON a handler may return (the body limit). */
  outputLimit: number;
}

/** What the session asks of the thread around it: fetches go to the host process. */
export interface SessionHost {
  fetch(request: FetchRequest): Promise<FetchAnswer>;
}

interface Invocation {
  deadline: number;
  logs: string[];
  logChars: number;
  pending: number;
  timers: Map<number, NodeJS.Timeout>;
  wake?: () => void;
}

/** How long reading a thrown value's `name` or `message` may run user code (a getter). */
const DESCRIBE_BUDGET_MS = 20;

export class SandboxSession {
  private current: Invocation | undefined;
  /** While a thrown value is read (its `name` and `message` may be getters that loop): when that reading is cut off. */
  private describingUntil: number | undefined;
  /** Set once a limit was hit: the VM may be mid-operation, so the session is not used again. */
  broken = false;

  private constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly api: QuickJSHandle,
    private readonly limits: SessionLimits,
  ) {}

  /** Evaluates the prelude and `code` (a sloppy-mode script) within `timeoutMs`; throws the script's error described. */
  static async open(code: string, limits: SessionLimits, host: SessionHost, timeoutMs: number): Promise<SandboxSession> {
    const module = await newQuickJSModule();
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(1024 * 1024);
    const vm = runtime.newContext();
    // The host functions and the interrupt handler find the session once it exists.
    const holder: { session?: SandboxSession } = {};
    const deadline = Date.now() + timeoutMs;
    runtime.setInterruptHandler(() => Date.now() > Math.min(holder.session?.describingUntil ?? Infinity, holder.session?.current?.deadline ?? deadline));
    const hostObject = SandboxSession.hostObject(vm, () => holder.session, host);
    const prelude = vm.unwrapResult(vm.evalCode(PRELUDE, 'prelude.js', { type: 'global' }));
    const api = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, hostObject));
    prelude.dispose();
    hostObject.dispose();
    const session = new SandboxSession(runtime, vm, api, limits);
    holder.session = session;
    const evaluated = vm.evalCode(code, 'function.js', { type: 'global', strict: false });
    if (evaluated.error) {
      const described = session.describe(evaluated.error, Date.now() > deadline);
      evaluated.error.dispose();
      throw new ScriptError(described);
    }
    evaluated.value.dispose();
    return session;
  }

  private static hostObject(vm: QuickJSContext, session: () => SandboxSession | undefined, host: SessionHost): QuickJSHandle {
    const object = vm.newObject();
    const add = (name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
      const handle = vm.newFunction(name, fn);
      vm.setProp(object, name, handle);
      handle.dispose();
    };
    const text = (h: QuickJSHandle | undefined) => (h === undefined ? undefined : vm.typeof(h) === 'undefined' ? undefined : vm.getString(h));
    const json = <T>(h: QuickJSHandle) => JSON.parse(vm.getString(h)) as T;
    // The prelude reads a thrown value (its getters are user code) between describing(true) and
    // describing(false): a few milliseconds, not what is left of the invocation.
    add('describing', (on) => {
      const current = session();
      if (current) current.describingUntil = vm.typeof(on) === 'boolean' && vm.dump(on) === true ? Date.now() + DESCRIBE_BUDGET_MS : undefined;
      return undefined;
    });
    add('log', (args) => {
      const [level, line] = json<[string, string]>(args);
      session()?.log(`${level}: ${line}`);
      return undefined;
    });
    add('conv', (args) => {
      const [value, from, to] = json<[string, string, string]>(args).map((a) => String(a));
      const [f, t] = [from.toLowerCase(), to.toLowerCase()];
      if (!ENCODINGS.has(f) || !ENCODINGS.has(t)) throw new Error(`Unknown encoding: ${ENCODINGS.has(f) ? to : from}`);
      return vm.newString(JSON.stringify(Buffer.from(value, f as BufferEncoding).toString(t as BufferEncoding)));
    });
    add('digest', (args) => {
      const [algorithm, key, data] = json<[string, string | null, string]>(args);
      const name = String(algorithm).toLowerCase().replace('-', '');
      if (!DIGESTS.has(name)) throw new Error(`Digest method not supported: ${String(algorithm)}`);
      const bytes = Buffer.from(String(data), 'latin1');
      const digest =
        key === null
          ? createHash(name).update(bytes).digest()
          : createHmac(name, Buffer.from(String(key), 'latin1'))
              .update(bytes)
              .digest();
      return vm.newString(JSON.stringify(digest.toString('latin1')));
    });
    add('url', (input, base, part, value) => {
      let url: URL;
      try {
        url = new URL(vm.getString(input), text(base));
      } catch {
        throw new TypeError(`Invalid URL: ${vm.getString(input)}`);
      }
      const field = text(part);
      if (field !== undefined) (url as unknown as Record<string, string>)[field] = text(value) ?? '';
      const { href, origin, protocol, username, password, host: hostPart, hostname, port, pathname, search, hash } = url;
      return vm.newString(JSON.stringify({ href, origin, protocol, username, password, host: hostPart, hostname, port, pathname, search, hash }));
    });
    add('timer', (id, ms) => {
      session()?.timer(vm.getNumber(id), vm.getNumber(ms));
      return undefined;
    });
    add('lodash', () => {
      vm.unwrapResult(vm.evalCode(lodash(), 'lodash.js', { type: 'global' })).dispose();
      return undefined;
    });
    add('fetch', (requestJson) => {
      const request = JSON.parse(vm.getString(requestJson)) as FetchRequest;
      const deferred = vm.newPromise();
      const s = session();
      if (!s?.current) {
        deferred.resolve(vm.newString(JSON.stringify({ error: 'fetch is only available while a handler runs' })));
        return deferred.handle;
      }
      const invocation = s.current;
      invocation.pending++;
      void host.fetch(request).then((answer) => {
        invocation.pending--;
        if (s.current !== invocation || !vm.alive) return;
        const value = vm.newString(JSON.stringify(answer));
        deferred.resolve(value);
        value.dispose();
        invocation.wake?.();
      });
      return deferred.handle;
    });
    return object;
  }

  private log(line: string): void {
    const invocation = this.current;
    if (!invocation || invocation.logChars >= LOG_LIMIT) return;
    const room = LOG_LIMIT - invocation.logChars;
    const kept = line.length > room ? `${line.slice(0, room)}… (console output over ${LOG_LIMIT} characters was cut)` : line;
    invocation.logs.push(kept);
    invocation.logChars += line.length > room ? LOG_LIMIT : line.length + 1;
  }

  private timer(id: number, ms: number): void {
    const invocation = this.current;
    if (!invocation) return;
    const handle = setTimeout(() => {
      invocation.timers.delete(id);
      if (this.current !== invocation) return;
      this.fire(invocation, id);
    }, ms);
    invocation.timers.set(id, handle);
  }

  private fire(invocation: Invocation, id: number): void {
    const fire = this.vm.getProp(this.api, 'fire');
    const result = this.vm.callFunction(fire, this.vm.undefined, this.vm.newNumber(id));
    fire.dispose();
    if (result.error) {
      this.log(`error: uncaught in a timer: ${this.describe(result.error, false).message}`);
      result.error.dispose();
    } else {
      const again = this.vm.getNumber(result.value);
      result.value.dispose();
      if (again >= 0) this.timer(id, again);
    }
    invocation.wake?.();
  }

  /** Runs `handler` with the event (or request) and settings, within `timeoutMs`. */
  async invoke(handler: string, input: unknown, settings: unknown, timeoutMs: number): Promise<InvocationOutcome> {
    const started = Date.now();
    const invocation: Invocation = { deadline: started + timeoutMs, logs: [], logChars: 0, pending: 0, timers: new Map() };
    this.current = invocation;
    const finish = (outcome: Omit<InvocationOutcome, 'logs' | 'durationMs'>): InvocationOutcome => {
      for (const handle of invocation.timers.values()) clearTimeout(handle);
      this.current = undefined;
      return { ...outcome, logs: invocation.logs, durationMs: Date.now() - started };
    };
    const vm = this.vm;
    const run = vm.getProp(this.api, 'run');
    const args = [vm.newString(handler), vm.newString(JSON.stringify(input ?? null)), vm.newString(JSON.stringify(settings ?? {})), vm.newNumber(this.limits.outputLimit)];
    const called = vm.callFunction(run, vm.undefined, ...args);
    run.dispose();
    for (const a of args) a.dispose();
    if (called.error) {
      const error = this.describe(called.error, Date.now() > invocation.deadline);
      called.error.dispose();
      this.broken = true;
      return finish({ status: 'error', error });
    }
    const promise = called.value;
    try {
      for (;;) {
        const jobs = this.runtime.executePendingJobs();
        if (jobs.error) {
          const error = this.describe(jobs.error, Date.now() > invocation.deadline);
          jobs.error.dispose();
          this.broken = true;
          return finish({ status: 'error', error });
        }
        // Past the deadline, whatever the VM reports (an interrupt can surface as any error) is a timeout.
        if (Date.now() > invocation.deadline) return finish(this.timedOut(timeoutMs));
        const state = vm.getPromiseState(promise);
        if (state.type === 'fulfilled') {
          const answer = JSON.parse(vm.getString(state.value)) as { ok: boolean; result?: unknown; emitted?: unknown[]; error?: { type: string; message: string } };
          state.value.dispose();
          if (answer.ok) return finish({ status: 'ok', result: answer.result, emitted: answer.emitted });
          // A limit hit inside the handler can reach its promise as an ordinary rejection.
          const limit = limitError(answer.error!, this.limits);
          if (limit) this.broken = true;
          return finish({ status: 'error', error: limit ?? answer.error! });
        }
        if (state.type === 'rejected') {
          // run() never rejects; only an interrupt or exhausted memory inside it can get here.
          const error = this.describe(state.error, Date.now() > invocation.deadline);
          state.error.dispose();
          this.broken = true;
          return finish({ status: 'error', error });
        }
        const remaining = invocation.deadline - Date.now();
        if (remaining <= 0) return finish(this.timedOut(timeoutMs));
        if (invocation.pending === 0 && invocation.timers.size === 0) {
          // Nothing in flight can settle it: waiting out the limit would change nothing.
          return finish({ status: 'error', error: { type: 'Timeout', message: 'the handler returned a promise that never settles' } });
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, remaining);
          invocation.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        invocation.wake = undefined;
      }
    } finally {
      if (vm.alive) promise.dispose();
    }
  }

  private timedOut(timeoutMs: number): Omit<InvocationOutcome, 'logs' | 'durationMs'> {
    this.broken = true;
    return { status: 'error', error: { type: 'Timeout', message: `the function ran over its ${timeoutMs} ms limit` } };
  }

  /** A thrown VM value as {type, message}; an interrupt or exhausted memory counts as a limit, not user code. */
  private describe(handle: QuickJSHandle, overTime: boolean): { type: string; message: string } {
    if (overTime) return { type: 'Timeout', message: 'the function ran over its time limit' };
    const vm = this.vm;
    // A getter on the thrown value runs user code: it gets a few milliseconds, not what is left of the
    // invocation, and one that throws or is cut off reads as no value.
    const read = (name: string) => {
      this.describingUntil = Date.now() + DESCRIBE_BUDGET_MS;
      try {
        const prop = vm.getProp(handle, name);
        const value = vm.typeof(prop) === 'string' ? vm.getString(prop) : undefined;
        prop.dispose();
        return value;
      } catch {
        return undefined;
      } finally {
        this.describingUntil = undefined;
      }
    };
    const type = vm.typeof(handle) === 'object' ? read('name') : undefined;
    const message = vm.typeof(handle) === 'object' ? read('message') : undefined;
    const described = { type: type ?? 'Error', message: message ?? 'a non-Error value was thrown' };
    return limitError(described, this.limits) ?? described;
  }

  dispose(): void {
    // Dropping the references frees the session's WebAssembly memory; QuickJS's own teardown is
    // skipped on purpose, as it asserts on objects a cut-off invocation may still hold.
    this.current = undefined;
  }
}

/** QuickJS's words for an exhausted limit, in the sandbox's: Timeout or MemoryLimit. */
function limitError(error: { type: string; message: string }, limits: SessionLimits): { type: string; message: string } | undefined {
  if (error.type !== 'InternalError') return undefined;
  if (error.message === 'out of memory') return { type: 'MemoryLimit', message: `the function used more than its ${Math.round(limits.memoryBytes / 1048576)} MiB of memory` };
  if (error.message === 'interrupted') return { type: 'Timeout', message: 'the function ran over its time limit' };
  return undefined;
}

export class ScriptError extends Error {
  constructor(readonly described: { type: string; message: string }) {
    super(described.message);
  }
}
