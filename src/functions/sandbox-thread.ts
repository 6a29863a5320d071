import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSModule } from './quickjs-module';
import { SandboxSession, ScriptError, type SessionLimits } from './sandbox-session';
import type { FetchAnswer, FetchRequest, FromThread, InvocationOutcome, ToThread } from './types';

/**
 * The entry of a sandbox thread (sandbox-pool.ts starts it). User code runs here, off the event
 * loop of the process that delivers messages; the only way out is a message to that process (a
 * fetch, which it sends through the egress guard, or the outcome). The thread runs one invocation
 * at a time and keeps up to `maxSessions` sessions (module state per instance and version),
 * dropping the least recently used.
 */

export interface ThreadData extends SessionLimits {
  maxSessions: number;
}

const data = workerData as ThreadData;
const port = parentPort!;
const sessions = new Map<string, SandboxSession>();
const fetches = new Map<number, (answer: FetchAnswer) => void>();
let nextFetch = 1;
/** The invocation running now: a session outlives the call that opened it. */
let running = 0;
let queue = Promise.resolve();

function send(message: FromThread): void {
  port.postMessage(message);
}

async function invoke(id: number, message: Extract<ToThread, { kind: 'invoke' }>): Promise<InvocationOutcome> {
  const { invocation, timeoutMs } = message;
  running = id;
  const started = Date.now();
  let session = sessions.get(invocation.sessionKey);
  if (session) sessions.delete(invocation.sessionKey);
  else {
    const host = {
      fetch: (request: FetchRequest) =>
        new Promise<FetchAnswer>((resolve) => {
          const fetchId = nextFetch++;
          fetches.set(fetchId, resolve);
          send({ kind: 'fetch', id: fetchId, invocationId: running, request });
        }),
    };
    try {
      session = await SandboxSession.open(invocation.code, data, host, timeoutMs);
    } catch (err) {
      const error = err instanceof ScriptError ? err.described : { type: 'Error', message: (err as Error).message };
      return { status: 'error', error, logs: [], durationMs: Date.now() - started };
    }
  }
  const left = Math.max(1, timeoutMs - (Date.now() - started));
  const outcome = await session.invoke(invocation.handler, invocation.input, invocation.settings, left);
  if (!session.broken) {
    sessions.set(invocation.sessionKey, session);
    if (sessions.size > data.maxSessions) {
      const [oldestKey, oldest] = sessions.entries().next().value!;
      sessions.delete(oldestKey);
      oldest.dispose();
    }
  } else session.dispose();
  return { ...outcome, durationMs: Date.now() - started };
}

// Loading QuickJS once here makes the first session's start a matter of milliseconds.
void newQuickJSModule().then(() => send({ kind: 'ready' }));

port.on('message', (message: ToThread) => {
  if (message.kind === 'fetched') {
    fetches.get(message.id)?.(message.answer);
    fetches.delete(message.id);
    return;
  }
  queue = queue.then(async () => {
    let outcome: InvocationOutcome;
    try {
      outcome = await invoke(message.id, message);
    } catch (err) {
      outcome = { status: 'error', error: { type: 'Error', message: `the sandbox failed: ${(err as Error).message}` }, logs: [], durationMs: 0 };
    }
    send({ kind: 'done', id: message.id, outcome });
  });
});
