import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import { attemptAttributes, errorType, outcomeAttributes } from '../../src/tracing/attempt-attributes';
import { isTraceCarrier, parseTraceparent, parseTracestate } from '../../src/tracing/trace-carrier';
import { tracingSettings, type TracingConfig } from '../../src/tracing/tracing-settings';
import { withTraceHeaders } from '../../src/tracing/attempt-span';
import { senderContext } from '../../src/tracing/ingest-spans';
import { inputBodies, OPEN, type CallSeal } from '../../src/messages/seal-bodies';
import { openTraceContext, sealBody } from '../../src/privacy/sealed-body';
import type { MessageBody } from '../../src/delivery/types';

const T = '4bf92f3577b34da6a3ce929d0e0e4736';
const S = '00f067aa0ba902b7';

describe('parseTraceparent (W3C Trace Context: an invalid one names no parent, so the request starts a new root)', () => {
  it.each([
    ['a valid sampled one', `00-${T}-${S}-01`, { traceId: T, spanId: S, traceFlags: 1, isRemote: true }],
    ['a valid unsampled one', `00-${T}-${S}-00`, { traceId: T, spanId: S, traceFlags: 0, isRemote: true }],
    ['unknown flags, kept only as sampled or not', `00-${T}-${S}-ff`, { traceId: T, spanId: S, traceFlags: 1, isRemote: true }],
    ['a future version with more fields', `01-${T}-${S}-01-extra`, { traceId: T, spanId: S, traceFlags: 1, isRemote: true }],
    ['surrounding spaces', ` 00-${T}-${S}-01 `, { traceId: T, spanId: S, traceFlags: 1, isRemote: true }],
  ])('accepts %s', (_, header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${S}-01`],
    ['all-zero parent id', `00-${T}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${T}-${S}-01`],
    ['version 00 with more fields', `00-${T}-${S}-01-extra`],
    ['uppercase hex', `00-${T.toUpperCase()}-${S}-01`],
    ['a short trace id', `00-${T.slice(2)}-${S}-01`],
    ['a long parent id', `00-${T}-${S}00-01`],
    ['not hex', `00-${'g'.repeat(32)}-${S}-01`],
    ['two header lines', [`00-${T}-${S}-01`, `00-${T}-${S}-01`]],
    ['not a string', 42],
    ['an oversized value', `01-${T}-${S}-01-${'x'.repeat(600)}`],
  ])('refuses %s', (_, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});

describe('parseTracestate', () => {
  it.each([
    ['one member', 'vendor=abc', 'vendor=abc'],
    ['several, spaces trimmed', 'a=1 , b=2', 'a=1,b=2'],
    ['a multi-tenant key', 'tenant@vendor=x', 'tenant@vendor=x'],
    ['several header lines, as one list', ['a=1', 'b=2'], 'a=1,b=2'],
  ])('keeps %s', (_, header, expected) => {
    expect(parseTracestate(header)).toBe(expected);
  });

  it.each([
    ['absent', undefined],
    ['a member without =', 'vendor'],
    ['an uppercase key', 'Vendor=x'],
    ['a value with a comma-free but = inside', 'a=b=c'],
    ['more than 32 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
    ['more than 512 characters', `a=${'x'.repeat(255)},b=${'y'.repeat(255)}`],
  ])('drops %s whole', (_, header) => {
    expect(parseTracestate(header)).toBeUndefined();
  });
});

describe('senderContext', () => {
  it('continues a valid sender context with its tracestate, and is the root for an invalid one', () => {
    const span = trace.getSpanContext(senderContext({ traceparent: `00-${T}-${S}-01`, tracestate: 'vendor=abc' }));
    expect(span).toMatchObject({ traceId: T, spanId: S, isRemote: true });
    expect(span?.traceState?.serialize()).toBe('vendor=abc');
    expect(trace.getSpanContext(senderContext({ traceparent: `00-${'0'.repeat(32)}-${S}-01`, tracestate: 'vendor=abc' }))).toBeUndefined();
  });
});

describe('attemptAttributes and outcomeAttributes (what a webhook.attempt span says)', () => {
  const subject = { messageId: 'm1', destinationId: 'dst_1', webhookIndex: 2, round: 3, method: 'POST', url: 'https://user:secret@hooks.example.com/in/abcdef0123456789abcdef0123456789?token=secret#frag' };

  it('names the destination, the webhook index and the attempt, and a URL without credentials, query, fragment or token-like segments', () => {
    expect(attemptAttributes(subject)).toEqual({
      'switchyard.message_id': 'm1',
      'switchyard.destination_id': 'dst_1',
      'switchyard.webhook_index': 2,
      'switchyard.attempt': 3,
      'http.request.method': 'POST',
      'url.full': 'https://hooks.example.com/in/…',
    });
  });

  it('names a mapping in place of the index for an actions destination', () => {
    const attributes = attemptAttributes({ ...subject, webhookIndex: 0, mapping: 'Order to CRM', method: 'PUT' });
    expect(attributes).toMatchObject({ 'switchyard.mapping': 'Order to CRM', 'http.request.method': 'PUT' });
    expect(attributes).not.toHaveProperty('switchyard.webhook_index');
  });

  it.each([
    ['a success', { kind: 'success', status: 204 } as const, { 'http.response.status_code': 204 }],
    ['a 500', { kind: 'retry', status: 500, reason: 'HTTP 500' } as const, { 'http.response.status_code': 500, 'error.type': '500' }],
    ['a 410', { kind: 'permanent', status: 410, reason: 'HTTP 410 Gone' } as const, { 'http.response.status_code': 410, 'error.type': '410' }],
    ['a timeout', { kind: 'retry', reason: 'timeout: no response within 2000ms' } as const, { 'error.type': 'timeout' }],
    ['a refused connection', { kind: 'retry', reason: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1' } as const, { 'error.type': 'ECONNREFUSED' }],
    ['a certificate problem', { kind: 'permanent', reason: 'TLS certificate rejected (CERT_HAS_EXPIRED); no request was sent' } as const, { 'error.type': 'CERT_HAS_EXPIRED' }],
    ['free text', { kind: 'retry', reason: 'the receiver said something long' } as const, { 'error.type': '_OTHER' }],
  ])('records %s', (_, outcome, expected) => {
    expect(outcomeAttributes(outcome)).toEqual(expected);
  });

  it('never puts a reason\'s free text in error.type', () => {
    expect(errorType('socket hang up at https://secret.example.com')).toBe('_OTHER');
  });
});

describe('withTraceHeaders (what a request to a receiver carries)', () => {
  it('carries traceparent and tracestate as the propagator writes them, replacing static headers of those names and any baggage', () => {
    const headers = withTraceHeaders({ 'content-type': 'application/json', TraceParent: 'static', Baggage: 'user=x' }, (carrier) => {
      carrier.traceparent = `00-${T}-${S}-01`;
      carrier.tracestate = 'vendor=abc';
      carrier.baggage = 'user=y';
    });
    expect(headers).toEqual({ 'content-type': 'application/json', traceparent: `00-${T}-${S}-01`, tracestate: 'vendor=abc' });
  });

  it('sends tracestate only beside a traceparent', () => {
    expect(withTraceHeaders({}, (carrier) => void (carrier.tracestate = 'vendor=abc'))).toEqual({});
  });

  it('injects the attempt span\'s own id under the message\'s trace id, with W3C\'s propagator', () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const parent = senderContext({ traceparent: `00-${T}-${S}-01`, tracestate: 'vendor=abc' });
    const span = tracer.startSpan('webhook.attempt', {}, parent);
    const headers = withTraceHeaders({}, (carrier) => propagation.inject(trace.setSpan(parent, span), carrier));
    span.end();
    expect(headers.traceparent).toBe(`00-${T}-${span.spanContext().spanId}-01`);
    expect(span.spanContext().spanId).not.toBe(S);
    expect(headers.tracestate).toBe('vendor=abc');
    expect(exporter.getFinishedSpans()[0].parentSpanContext?.spanId).toBe(S);
    propagation.disable();
  });
});

describe('tracingSettings (the standard OTEL_* variables)', () => {
  const none: TracingConfig = { tracesExporter: '', otlpEndpoint: '', otlpTracesEndpoint: '', otlpTracesProtocol: 'http/protobuf', serviceName: '', bspScheduleDelay: 5000 };
  it.each([
    ['nothing set: off', none, undefined],
    ['an exporter named none: off, even with an endpoint', { ...none, tracesExporter: 'none', otlpEndpoint: 'http://c:4318' }, undefined],
    ['a base endpoint: /v1/traces appended', { ...none, otlpEndpoint: 'http://c:4318/' }, { url: 'http://c:4318/v1/traces', protocol: 'http/protobuf', serviceName: 'switchyard-worker', scheduleDelayMs: 5000 }],
    ['a traces endpoint: as is, over the base one', { ...none, otlpEndpoint: 'http://c:4318', otlpTracesEndpoint: 'http://t:9/x' }, { url: 'http://t:9/x', protocol: 'http/protobuf', serviceName: 'switchyard-worker', scheduleDelayMs: 5000 }],
    ['otlp named without an endpoint: the default collector', { ...none, tracesExporter: 'otlp', otlpTracesProtocol: 'http/json', serviceName: 'mine', bspScheduleDelay: 100 }, { url: 'http://localhost:4318/v1/traces', protocol: 'http/json', serviceName: 'mine', scheduleDelayMs: 100 }],
  ] as const)('%s', (_, config, expected) => {
    expect(tracingSettings(config as TracingConfig, 'switchyard-worker')).toEqual(expected);
  });
});

describe('the trace context in a delivery input (privacy: sealed like the bodies)', () => {
  const body: MessageBody = { type: 'track', userId: 'alice-trace-canary', event: 'E' };
  const carrier = { traceparent: `00-${T}-${S}-01`, tracestate: 'vendor=private-canary' };
  const key = randomBytes(32);
  const seal: CallSeal = { sealed: true, subject: 'subject-hash', key, visibleIds: { userId: 'h' }, ids: { type: 'track', userId: 'alice-trace-canary' } };

  it('is sealed beside every body of a sealed input, and nowhere in the clear', () => {
    const input = inputBodies('m1', seal, { body, destinationBodies: { dst_2: { ...body, event: 'F' } }, trace: carrier });
    const text = JSON.stringify(input);
    expect(text).not.toContain(T);
    expect(text).not.toContain('private-canary');
    expect(input).not.toHaveProperty('trace');
    expect(openTraceContext(key, 'm1', input.sealedMessage!)).toEqual(carrier);
    expect(openTraceContext(key, 'm1', input.destinationBodies!.dst_2.sealedMessage!)).toEqual(carrier);
  });

  it('does not open under another message id or key, and is dropped rather than thrown', () => {
    const sealed = sealBody(key, 'subject-hash', 'm1', body, undefined, undefined, carrier);
    expect(openTraceContext(key, 'm2', sealed)).toBeUndefined();
    expect(openTraceContext(randomBytes(32), 'm1', sealed)).toBeUndefined();
    expect(openTraceContext(key, 'm1', sealBody(key, 'subject-hash', 'm1', body))).toBeUndefined();
  });

  it('travels in the clear beside a body that does (no seal), and not at all without tracing', () => {
    expect(inputBodies('m1', OPEN, { body, trace: carrier })).toMatchObject({ message: body, trace: carrier });
    expect(inputBodies('m1', OPEN, { body })).not.toHaveProperty('trace');
    expect(sealBody(key, 'subject-hash', 'm1', body)).not.toHaveProperty('trace');
  });

  it('is read back only when it is a carrier', () => {
    expect(isTraceCarrier(carrier)).toBe(true);
    expect(isTraceCarrier({ traceparent: `00-${T}-${S}-01` })).toBe(true);
    expect(isTraceCarrier({ traceparent: 'garbage' })).toBe(false);
    expect(isTraceCarrier({ traceparent: `00-${T}-${S}-01`, tracestate: 7 })).toBe(false);
    expect(isTraceCarrier('00-…')).toBe(false);
  });
});

describe('any header is data (fast-check; the seed is printed on a failure, FC_SEED replays it)', () => {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
  const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 700 });
  const hexRun = fc.string({ unit: fc.constantFrom(...'0123456789abcdef0'), maxLength: 34 });
  const nearlyValid = fc.tuple(hexRun, hexRun, hexRun, hexRun).map((parts) => parts.join('-'));

  it('parses a traceparent into a valid parent named by the header, or into none; never throws', () => {
    fc.assert(
      fc.property(fc.oneof(printable, nearlyValid, fc.anything()), (header) => {
        const parent = parseTraceparent(header);
        if (parent === undefined) return;
        expect(isSpanContextValid(parent)).toBe(true);
        expect(String(header)).toContain(`${parent.traceId}-${parent.spanId}`);
      }),
      { seed, numRuns: 2_000 },
    );
  });

  it('keeps a tracestate only as a bounded list of well-formed members', () => {
    fc.assert(
      fc.property(fc.oneof(printable, fc.array(printable, { maxLength: 4 }), fc.anything()), (header) => {
        const kept = parseTracestate(header);
        if (kept === undefined) return;
        expect(kept.length).toBeLessThanOrEqual(512);
        expect(kept.split(',').length).toBeLessThanOrEqual(32);
      }),
      { seed, numRuns: 2_000 },
    );
  });
});
