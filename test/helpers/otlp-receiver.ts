import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** One span as a collector received it: ids as lowercase hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  attributes: Record<string, unknown>;
  serviceName: unknown;
}

/**
 * A loopback stand-in for an OpenTelemetry Collector's OTLP/HTTP receiver: it accepts
 * `POST /v1/traces` as `application/json` (OTLP/JSON) or `application/x-protobuf` (decoded with the
 * part of opentelemetry-proto's trace schema below), and keeps every span. No collector binary is
 * packaged for Debian, and the spans are all a test needs.
 */
export interface OtlpReceiver {
  /** The traces URL, for OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the export requests received, in order. */
  contentTypes: string[];
  /** Resolves with the spans once `ready(spans)` holds; rejects after `timeoutMs`. */
  waitFor(ready: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** opentelemetry-proto's trace export request, as far as the tests read it (other fields are skipped as unknown). */
const TRACE_PROTO = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; repeated KeyValue attributes = 9; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`;
const ExportRequest = protobuf.parse(TRACE_PROTO, { keepCase: false }).root.lookupType('ExportTraceServiceRequest');

interface KeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number };
}
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  attributes?: KeyValue[];
}
interface Export {
  resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: ExportedSpan[] }> }>;
}

const plain = (value: KeyValue['value']): unknown => {
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
};
const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));
/** OTLP/JSON writes ids as hex; protobufjs's toObject (bytes: String) as base64. */
const hexId = (id: string | undefined, bytes: 16 | 8) => (id === undefined || id === '' ? '' : /^[0-9a-f]+$/.test(id) && id.length === bytes * 2 ? id : Buffer.from(id, 'base64').toString('hex'));

function spansOf(exported: Export): ReceivedSpan[] {
  return (exported.resourceSpans ?? []).flatMap((resourceSpans) => {
    const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'];
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: hexId(span.traceId, 16),
        spanId: hexId(span.spanId, 8),
        parentSpanId: hexId(span.parentSpanId, 8),
        traceState: span.traceState ?? '',
        name: span.name,
        attributes: attributesOf(span.attributes),
        serviceName,
      })),
    );
  });
}

function decode(contentType: string, body: Buffer): Export {
  if (contentType.startsWith('application/json')) return JSON.parse(body.toString('utf8')) as Export;
  return ExportRequest.toObject(ExportRequest.decode(body), { bytes: String, longs: String, oneofs: false });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const contentType = String(req.headers['content-type'] ?? '');
      contentTypes.push(contentType);
      try {
        spans.push(...spansOf(decode(contentType, Buffer.concat(chunks))));
      } catch {
        return void res.writeHead(400).end();
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      if (contentType.startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    contentTypes,
    async waitFor(ready, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (!ready(spans)) {
        if (Date.now() > until) throw new Error(`the OTLP receiver did not get the spans expected; it has ${JSON.stringify(spans.map((s) => [s.name, s.traceId, s.spanId, s.parentSpanId]))}`);
        await new Promise((wake) => setTimeout(wake, 50));
      }
      return spans;
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
