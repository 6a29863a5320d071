import { request, type Dispatcher } from 'undici';
import { LIBRARY } from './library';
import type { AttemptResult } from './retry';

export interface BatchRequest {
  url: string;
  writeKey: string;
  body: string;
  /** Whole-attempt bound: connecting, sending and reading the answer. */
  timeout: number;
  dispatcher: Dispatcher;
  /** Aborted by `close({ timeout })`. */
  signal: AbortSignal;
}

/** The longest part of an error reply kept for the report; the API's `{code, message}` fits easily. */
const MAX_REPLY_CHARS = 2_000;

/** One `POST /v1/batch` attempt. Never throws: every way it can end is an `AttemptResult`. */
export async function postBatch(req: BatchRequest): Promise<AttemptResult> {
  if (req.signal.aborted) return { kind: 'aborted' };
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort();
  }, req.timeout);
  timer.unref();
  const onClose = () => attempt.abort();
  req.signal.addEventListener('abort', onClose, { once: true });
  try {
    const response = await request(req.url, {
      method: 'POST',
      dispatcher: req.dispatcher,
      signal: attempt.signal,
      headers: {
        authorization: `Basic ${Buffer.from(`${req.writeKey}:`).toString('base64')}`,
        'content-type': 'application/json',
        'user-agent': `${LIBRARY.name}/${LIBRARY.version}`,
      },
      body: req.body,
    });
    const text = await response.body.text();
    const retryAfter = response.headers['retry-after'];
    return {
      kind: 'response',
      status: response.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      body: text.slice(0, MAX_REPLY_CHARS),
    };
  } catch (err) {
    if (req.signal.aborted) return { kind: 'aborted' };
    if (timedOut) return { kind: 'network_error', error: new Error(`no complete answer within ${req.timeout} ms`), timedOut: true };
    return { kind: 'network_error', error: err instanceof Error ? err : new Error(String(err)), timedOut: false };
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener('abort', onClose);
  }
}

/** A reply as a person reads it: `400 invalid_request: batch[3].userId: …` for the API's `{code, message}` bodies. */
export function describeReply(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    if (typeof parsed.code === 'string' && typeof parsed.message === 'string') return `${status} ${parsed.code}: ${parsed.message}`;
  } catch {
    // Not the API's JSON error shape (a proxy's HTML page, say): fall through to the raw text.
  }
  const text = body.replace(/\s+/g, ' ').trim().slice(0, 200);
  return text ? `${status}: ${text}` : String(status);
}
