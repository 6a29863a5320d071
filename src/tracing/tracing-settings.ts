import type { Config } from '../config';

export type TracingConfig = Pick<Config, 'tracesExporter' | 'otlpEndpoint' | 'otlpTracesEndpoint' | 'otlpTracesProtocol' | 'serviceName' | 'bspScheduleDelay'>;

export interface TracingSettings {
  /** Where spans are POSTed. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
  scheduleDelayMs: number;
}

/** OpenTelemetry's default OTLP/HTTP collector address, for `OTEL_TRACES_EXPORTER=otlp` without an endpoint. */
const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/**
 * Whether this process traces, from the standard OTEL_* variables (OpenTelemetry's
 * environment specification): off unless an exporter is asked for, by name or by giving it an
 * endpoint. The per-signal endpoint is used as is; the base endpoint gets `/v1/traces` appended.
 */
export function tracingSettings(config: TracingConfig, processName: string): TracingSettings | undefined {
  if (config.tracesExporter === 'none') return undefined;
  if (config.tracesExporter === '' && !config.otlpTracesEndpoint && !config.otlpEndpoint) return undefined;
  const url = config.otlpTracesEndpoint || `${(config.otlpEndpoint || DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`;
  return { url, protocol: config.otlpTracesProtocol, serviceName: config.serviceName || processName, scheduleDelayMs: config.bspScheduleDelay };
}
