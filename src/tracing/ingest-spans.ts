import { createTraceState, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE } from '@opentelemetry/semantic-conventions';
import { ATTEMPT_ATTRIBUTES } from './attempt-attributes';
import { parseTraceparent, parseTracestate, type TraceCarrier } from './trace-carrier';
import { activeTracer } from './tracing';

/** Each accepted message's own span, a child of its request's (a batch's messages are siblings). */
export const MESSAGE_SPAN = 'message.accept';
export const SOURCE_ATTRIBUTE = 'switchyard.source_id';

/** One ingestion request's spans, while tracing is on. */
export interface IngestTrace {
  /** Starts the message's span under the request's and answers its W3C carrier, which its workflow input carries (sealed). */
  messageCarrier(messageId: string): TraceCarrier;
  /** Ends every span of the request, with the status the sender heard. */
  end(statusCode: number): void;
}

/**
 * The parent the sender named: its `traceparent` and `tracestate` when the traceparent is valid;
 * the root otherwise (absent, malformed, all-zero ids, version ff), so the request starts a trace
 * of its own, never an error.
 */
export function senderContext(headers: Record<string, string | string[] | undefined>): Context {
  const remote = parseTraceparent(headers.traceparent);
  if (!remote) return ROOT_CONTEXT;
  const tracestate = parseTracestate(headers.tracestate);
  return trace.setSpanContext(ROOT_CONTEXT, { ...remote, ...(tracestate !== undefined && { traceState: createTraceState(tracestate) }) });
}

/**
 * The request's server span (named `POST <route>`, as OpenTelemetry's HTTP conventions name a
 * server span), continuing the sender's trace; undefined while tracing is off.
 */
export function traceIngestRequest(route: string, sourceId: string, headers: Record<string, string | string[] | undefined>): IngestTrace | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  const parent = senderContext(headers);
  const span = tracer.startSpan(`POST ${route}`, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_HTTP_ROUTE]: route, [SOURCE_ATTRIBUTE]: sourceId } }, parent);
  const request = trace.setSpan(parent, span);
  const messages: Span[] = [];
  return {
    messageCarrier(messageId) {
      const message = tracer.startSpan(MESSAGE_SPAN, { kind: SpanKind.INTERNAL, attributes: { [ATTEMPT_ATTRIBUTES.messageId]: messageId, [SOURCE_ATTRIBUTE]: sourceId } }, request);
      messages.push(message);
      const carrier: Partial<TraceCarrier> = {};
      propagation.inject(trace.setSpan(request, message), carrier);
      return carrier as TraceCarrier;
    },
    end(statusCode) {
      for (const message of messages) message.end();
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
      if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
