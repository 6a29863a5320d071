import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { AttemptOutcome, TraceCarrier } from '../delivery/types';
import { ATTEMPT_SPAN, attemptAttributes, outcomeAttributes, type AttemptSubject } from './attempt-attributes';
import { senderContext } from './ingest-spans';
import { activeTracer } from './tracing';

/** Trace headers a request to a receiver may carry only as Switchyard sets them (`baggage` never). */
const TRACE_HEADERS = new Set(['traceparent', 'tracestate', 'baggage']);

/**
 * One attempt as its own short span, `webhook.attempt`, a child of the message's span
 * (the carrier sealed in its input): it starts when the request is sent and ends with the answer,
 * so no span stays open across a retry wait and each attempt has its own span id under the
 * message's trace id. With `propagate` (the destination's `propagateTraceContext`), the request
 * carries that span as `traceparent`, and `tracestate` only beside it; without it, neither, while
 * the span is still exported. While tracing is off this is `send(headers)` and nothing else.
 */
export async function tracedAttempt(subject: AttemptSubject & { trace?: TraceCarrier }, propagate: boolean, headers: Record<string, string>, send: (headers: Record<string, string>) => Promise<AttemptOutcome>): Promise<AttemptOutcome> {
  const tracer = activeTracer();
  if (!tracer) return send(headers);
  const parent = subject.trace ? senderContext({ traceparent: subject.trace.traceparent, tracestate: subject.trace.tracestate }) : ROOT_CONTEXT;
  const span = tracer.startSpan(ATTEMPT_SPAN, { kind: SpanKind.CLIENT, attributes: attemptAttributes(subject) }, parent);
  try {
    const outgoing = propagate ? withTraceHeaders(headers, (carrier) => propagation.inject(trace.setSpan(parent, span), carrier)) : headers;
    const outcome = await send(outgoing);
    span.setAttributes(outcomeAttributes(outcome));
    if (outcome.kind !== 'success') span.setStatus({ code: SpanStatusCode.ERROR });
    return outcome;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The request's headers with the trace headers the propagator writes, in place of any of the
 * destination's own static headers of those names (whatever their case), so a request never
 * carries two.
 */
export function withTraceHeaders(headers: Record<string, string>, inject: (carrier: Record<string, string>) => void): Record<string, string> {
  const carrier: Record<string, string> = {};
  inject(carrier);
  const kept = Object.entries(headers).filter(([name]) => !TRACE_HEADERS.has(name.toLowerCase()));
  const traced = Object.entries(carrier).filter(([name]) => name === 'traceparent' || (name === 'tracestate' && carrier.traceparent !== undefined));
  return Object.fromEntries([...kept, ...traced]);
}
