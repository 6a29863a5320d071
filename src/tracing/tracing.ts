import { propagation, trace, type Tracer } from '@opentelemetry/api';
import { VERSION } from '../version';
import { tracingSettings, type TracingConfig } from './tracing-settings';

/**
 * The process's tracer while tracing is on. OpenTelemetry's API is process-wide by
 * design (one global provider and propagator, which any library may read), so Switchyard's switch
 * sits beside it: the ingest and attempt code ask this first, and while it is off they make no
 * span, read no header and send none, at the cost of one comparison.
 */
let active: Tracer | undefined;

export const activeTracer = (): Tracer | undefined => active;

/**
 * Starts tracing when the OTEL_* settings ask for it, and answers how to stop it (exporting the
 * spans still waiting); undefined when off, in which case no OpenTelemetry SDK module is even
 * loaded. Called first thing in each entry point: the global propagator must be in place before
 * any client or interceptor is built, or they capture the API's no-op one for good.
 *
 * The 2.x SDK line, with no OpenTelemetry in the workflow sandbox: docs/operations.md "Tracing".
 */
export async function startTracing(config: TracingConfig, processName: string): Promise<(() => Promise<void>) | undefined> {
  const settings = tracingSettings(config, processName);
  if (!settings) return undefined;
  const [{ W3CTraceContextPropagator }, { BasicTracerProvider, BatchSpanProcessor }, { resourceFromAttributes }, { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION }] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const { OTLPTraceExporter } = settings.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: VERSION }),
    // Spans leave in batches, off the request's and the attempt's path; a collector that is down
    // costs dropped spans (the queue is bounded), never a delayed delivery.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), { scheduledDelayMillis: settings.scheduleDelayMs })],
  });
  // W3C Trace Context alone: `traceparent` and `tracestate`, never `baggage` (a receiver is a third party).
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  active = provider.getTracer('switchyard', VERSION);
  return async () => {
    active = undefined;
    await provider.shutdown();
  };
}
