/** The shapes that cross between the host process and a sandbox thread (structured-clone safe). */

/** A request a function's `fetch` makes; `body` is binary (latin1) text. */
export interface FetchRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body?: string;
}

/** What `fetch` resolves with (`body` binary, latin1), or why it was refused. */
export type FetchAnswer = { status: number; statusText: string; headers: [string, string][]; url: string; body: string; error?: undefined } | { error: string };

/** One outgoing request as the test console and the attempt show it. */
export interface TracedRequest {
  method: string;
  url: string;
  status: number | null;
  durationMs: number;
  error?: string;
}

export interface FunctionError {
  /** A Segment error class (RetryError, …), the name of another Error, or a limit: Timeout, MemoryLimit, OutputTooLarge. */
  type: string;
  message: string;
}

export interface InvocationOutcome {
  status: 'ok' | 'error';
  result?: unknown;
  /** Calls a source function emitted with Segment.* (kept only when it returned without error). */
  emitted?: unknown[];
  error?: FunctionError;
  logs: string[];
  durationMs: number;
}

/** One call into the sandbox: the code of one version, run for one instance. */
export interface Invocation {
  /** Module state is kept per key: an instance and the version it runs. */
  sessionKey: string;
  code: string;
  handler: string;
  input: unknown;
  settings: unknown;
}

/** Messages from the host process to a sandbox thread. */
export type ToThread = { kind: 'invoke'; id: number; invocation: Invocation; timeoutMs: number } | { kind: 'fetched'; id: number; answer: FetchAnswer };

/** Messages from a sandbox thread to the host process. */
export type FromThread = { kind: 'ready' } | { kind: 'done'; id: number; outcome: InvocationOutcome } | { kind: 'fetch'; id: number; invocationId: number; request: FetchRequest };
