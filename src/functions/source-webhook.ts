import { createHash } from 'node:crypto';
import { MESSAGE_TYPES, type CallType } from '../delivery/types';
import type { Call } from '../messages/call';

/**
 * A source function's webhook and what its runs emit, as Segment shapes them. Pure: the admin API
 * makes the URL, the ingestion API reads it back, the workflow's activity turns the emitted calls
 * into the calls the ingest path takes.
 */

/** Segment's longest source-function webhook body (512 KiB). */
export const SOURCE_FUNCTION_BODY_LIMIT = 512 * 1024;

/** The path a source function's webhook is served at on the ingestion API. */
export const SOURCE_FUNCTION_PATH = '/functions';

const SEPARATOR = '::';

/** `<base>/functions?b=<base64 of sourceId::writeKey>`, Segment's form of a source function's webhook URL. */
export function sourceFunctionWebhookUrl(base: string, sourceId: string, writeKey: string): string {
  const b = Buffer.from(`${sourceId}${SEPARATOR}${writeKey}`, 'utf8').toString('base64');
  return `${base.replace(/\/+$/, '')}${SOURCE_FUNCTION_PATH}?b=${encodeURIComponent(b)}`;
}

/** The source id and write key a webhook's `b` names, or why it names none (the 400's text). */
export function decodeWebhookKey(b: unknown): { sourceId: string; writeKey: string } | { problem: string } {
  if (typeof b !== 'string' || b === '') return { problem: 'b: is required (the webhook URL names its source in ?b=)' };
  if (b.length > 1024 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(b)) return { problem: 'b: is not base64 (the webhook URL names its source in ?b=<base64 of sourceId::key>)' };
  const text = Buffer.from(b.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
  const at = text.indexOf(SEPARATOR);
  const sourceId = at < 0 ? '' : text.slice(0, at);
  const writeKey = at < 0 ? '' : text.slice(at + SEPARATOR.length);
  if (!/^[\x21-\x7e]{1,200}$/.test(sourceId) || !/^[\x21-\x7e]{1,200}$/.test(writeKey)) return { problem: 'b: does not decode to sourceId::key' };
  return { sourceId, writeKey };
}

/** Segment's runtime copies only these fields of an emitted call. */
const KEPT_FIELDS = ['traits', 'properties', 'name', 'event', 'groupId', 'previousId', 'userId', 'anonymousId', 'context', 'integrations', 'messageId', 'sentAt', 'timestamp'] as const;

/**
 * The messageId of a request's `index`-th emitted call that brought none: the same for every run of
 * the same request, so a retried (or re-run) request starts the same delivery workflows again,
 * which Temporal refuses as duplicates: nothing is delivered twice.
 */
export function emittedMessageId(requestId: string, index: number): string {
  return `fn-${createHash('sha256').update(`${requestId}\0${index}`).digest('hex').slice(0, 32)}`;
}

export interface EmittedCalls {
  calls: Call[];
  /** `Segment.set` objects: Segment sends them to warehouses only, which Switchyard has none of. */
  objects: number;
}

/**
 * What a run emitted (`{type, message}` in order) as calls, as Segment's runtime forwards them:
 * only its whitelisted fields, falsy values dropped as it drops them, and a deterministic messageId
 * where the function gave none.
 */
export function emittedCalls(requestId: string, emitted: unknown[]): EmittedCalls {
  const calls: Call[] = [];
  let objects = 0;
  emitted.forEach((entry, index) => {
    const { type, message } = (entry ?? {}) as { type?: unknown; message?: unknown };
    if (type === 'set') {
      objects += 1;
      return;
    }
    if (!(MESSAGE_TYPES as readonly unknown[]).includes(type) || typeof message !== 'object' || message === null) return;
    const fields: Record<string, unknown> = {};
    for (const name of KEPT_FIELDS) {
      const value = (message as Record<string, unknown>)[name];
      if (value) fields[name] = value;
    }
    if (typeof fields.messageId !== 'string') fields.messageId = emittedMessageId(requestId, index);
    calls.push({ type: type as CallType, fields });
  });
  return { calls, objects };
}
