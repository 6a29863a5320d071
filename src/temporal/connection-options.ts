import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import type { Config } from '../config';

/** The settings every Temporal connection of a process is made from (API client, worker, activities' client). */
export type TemporalConnectionSettings = Pick<
  Config,
  'temporalAddress' | 'temporalNamespace' | 'temporalTls' | 'temporalTlsCa' | 'temporalTlsCert' | 'temporalTlsKey' | 'temporalTlsServerName' | 'temporalApiKey'
>;

/** What both `Connection.connect` (client) and `NativeConnection.connect` (worker) take. */
export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plaintext. `{}`: TLS with the system's root CAs. */
  tls?: TLSConfig;
  /** Sent as `Authorization: Bearer <apiKey>`; kept out of every log line and error message. */
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** A setting that cannot work: start-up stops with the variable's name (never a secret's value). */
export class TemporalSettingsError extends Error {
  override name = 'TemporalSettingsError';
}

type ReadFile = (path: string) => Buffer;

function pemFile(variable: string, path: string, readFile: ReadFile): Buffer {
  let content: Buffer;
  try {
    content = readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TemporalSettingsError(`Invalid ${variable}: cannot read ${path} (${code ?? (err as Error).message})`);
  }
  if (!content.toString('utf8').includes('-----BEGIN ')) throw new TemporalSettingsError(`Invalid ${variable}: ${path} is not a PEM file (no "-----BEGIN" line)`);
  return content;
}

/**
 * The one rule for how Switchyard reaches Temporal: plaintext, TLS (system roots or TEMPORAL_TLS_CA),
 * mutual TLS (TEMPORAL_TLS_CERT + TEMPORAL_TLS_KEY), an API key (Temporal Cloud; implies TLS).
 * Reads the PEM files now, so a missing one stops start-up naming its variable and path.
 */
export function temporalConnectionOptions(config: TemporalConnectionSettings, readFile: ReadFile = (path) => readFileSync(path)): TemporalConnectionOptions {
  const { temporalTlsCa: ca, temporalTlsCert: cert, temporalTlsKey: key, temporalTlsServerName: serverName, temporalApiKey: apiKey } = config;
  if (Boolean(cert) !== Boolean(key)) {
    throw new TemporalSettingsError(`Invalid ${cert ? 'TEMPORAL_TLS_CERT' : 'TEMPORAL_TLS_KEY'}: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together (mutual TLS needs both the client certificate and its key)`);
  }
  if (config.temporalTls === false) {
    const contradicting = [ca && 'TEMPORAL_TLS_CA', cert && 'TEMPORAL_TLS_CERT', serverName && 'TEMPORAL_TLS_SERVER_NAME'].filter(Boolean);
    if (contradicting.length > 0) throw new TemporalSettingsError(`Invalid TEMPORAL_TLS: false, yet ${contradicting.join(', ')} ${contradicting.length > 1 ? 'are' : 'is'} set`);
  }
  const useTls = config.temporalTls ?? Boolean(ca || cert || serverName || apiKey);
  const options: TemporalConnectionOptions = { address: config.temporalAddress };
  if (useTls) {
    options.tls = {
      ...(ca && { serverRootCACertificate: pemFile('TEMPORAL_TLS_CA', ca, readFile) }),
      ...(cert && { clientCertPair: { crt: pemFile('TEMPORAL_TLS_CERT', cert, readFile), key: pemFile('TEMPORAL_TLS_KEY', key, readFile) } }),
      ...(serverName && { serverNameOverride: serverName }),
    };
  }
  if (apiKey) {
    options.apiKey = apiKey;
    // Temporal Cloud's regional endpoints route an API key's calls by this header.
    options.metadata = { 'temporal-namespace': config.temporalNamespace };
  }
  return options;
}

/** How a connection is described in logs and errors: address and kind of security, never the key. */
export function describeConnection(options: TemporalConnectionOptions): string {
  const security = options.tls ? (options.tls.clientCertPair ? 'mutual TLS' : 'TLS') : 'plaintext';
  return `${options.address} (${security}${options.apiKey ? ', API key' : ''})`;
}
