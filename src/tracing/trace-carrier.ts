import { isSpanContextValid, TraceFlags, type SpanContext } from '@opentelemetry/api';
import type { TraceCarrier } from '../delivery/types';

/**
 * A message's W3C trace context as it travels from ingest to its attempts (the workflow
 * input, sealed with the body: seal-bodies.ts): `traceparent` of the message's own span, and the
 * caller's `tracestate`, passed on unread. Never `baggage`: it may carry anything of the caller's,
 * and a receiver is a third party. Declared with the shapes that cross Temporal (delivery/types.ts).
 */
export type { TraceCarrier };

/**
 * W3C Trace Context level 1 (§3.2.2): version, trace id, parent id, flags, lowercase hex. A future
 * version may append fields after the flags; version 00 may not, and `ff` is never valid.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** §3.3.1.1: at most 32 list members; 512 characters is what §3.3.1.5 asks a vendor to keep at least. */
const TRACESTATE_MAX_CHARS = 512;
const TRACESTATE_MAX_MEMBERS = 32;
/** One list member, `key=value` (§3.3.1.3): simple or multi-tenant key, printable value without `,` or `=`. */
const TRACESTATE_MEMBER = /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The remote parent a `traceparent` header names, or undefined when it names none: absent, not
 * W3C's shape, version `ff`, version 00 with extra fields, or an all-zero trace or parent id (W3C:
 * invalid, "vendors MUST ignore"). The caller then starts a new root; a sender's bad header is
 * never an error of its request.
 */
export function parseTraceparent(header: unknown): SpanContext | undefined {
  const value = firstHeaderValue(header)?.trim();
  if (value === undefined || value.length > 512) return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context: SpanContext = { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(context) ? context : undefined;
}

/**
 * The caller's `tracestate`, kept only beside a valid `traceparent` and only when every list member
 * is well formed (W3C: a malformed tracestate is dropped whole); several header lines join as one list.
 */
export function parseTracestate(header: unknown): string | undefined {
  const lines = (Array.isArray(header) ? header : [header]).filter((line): line is string => typeof line === 'string');
  const value = lines.join(',');
  if (value === '' || value.length > TRACESTATE_MAX_CHARS) return undefined;
  const members = value
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  return members.every((member) => TRACESTATE_MEMBER.test(member)) ? members.join(',') : undefined;
}

/** Whether a value read back from a workflow input is a carrier this module made (a history is data, not trusted shape). */
export function isTraceCarrier(value: unknown): value is TraceCarrier {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return parseTraceparent(v.traceparent) !== undefined && (v.tracestate === undefined || typeof v.tracestate === 'string');
}

function firstHeaderValue(header: unknown): string | undefined {
  const value: unknown = Array.isArray(header) ? (header.length === 1 ? (header[0] as unknown) : undefined) : header;
  return typeof value === 'string' ? value : undefined;
}
