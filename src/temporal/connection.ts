import net from 'node:net';
import tls from 'node:tls';
import type { Interceptor } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Keyring } from '../privacy/keyring';
import { switchyardDataConverter } from './data-converter';
import { formatDuration } from '../delivery/duration';
import { cancellableRetryInterceptor } from './grpc-retry';
import { searchAttributeProblemMessage, searchAttributeProblems } from './search-attribute-check';
import { describeConnection, temporalConnectionOptions, TemporalSettingsError, type TemporalConnectionOptions, type TemporalConnectionSettings } from './connection-options';

/**
 * Start-up of every process that talks to Temporal (API, worker, `npm start`): one rule.
 * - Temporal not reachable yet (nothing listening, connection reset, no answer, a proxy in front
 *   with no server behind it): wait, logging "waiting for Temporal at …" every 10 s, for up to
 *   TEMPORAL_CONNECT_TIMEOUT (`0`: forever), then exit.
 * - Reached, but the TLS handshake fails (unknown CA, wrong name, client certificate required or
 *   refused) or the credentials are refused: stop at once with what to check. Waiting would not help.
 * The SDK's own client reports all of these alike ("Failed to connect before the deadline"), so a
 * handshake of our own with the same CA, certificate and name tells them apart first.
 */

/** A reason start-up must stop now (bad TLS, refused credentials, or the wait ran out). */
export class TemporalStartupError extends Error {
  override name = 'TemporalStartupError';
}

/** Temporal is not (yet) there: worth waiting for. */
class TemporalUnreachable extends Error {}

export type TemporalConnectSettings = TemporalConnectionSettings & Pick<Config, 'temporalConnectTimeout'>;

export interface ConnectRule {
  /** Longest wait for an unreachable Temporal, ms; 0 waits forever. */
  timeoutMs: number;
  logger?: Logger;
  /** Between two tries. */
  retryMs?: number;
  /** Between two "waiting for Temporal" lines. */
  logEveryMs?: number;
}

// Errors that mean "nobody (useful) answered": a server still starting, a proxy with no backend yet.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED', 'EAI_AGAIN', 'ENOTFOUND', 'EADDRNOTAVAIL']);
// Certificate verification failures: the CA to trust is the one to check.
const UNTRUSTED_CODES = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED']);

/** What to check when a handshake fails, by Node's error code. */
function tlsHint(code: string | undefined): string {
  if (!code) return 'check TEMPORAL_TLS_CA, TEMPORAL_TLS_CERT/TEMPORAL_TLS_KEY and TEMPORAL_TLS_SERVER_NAME';
  if (UNTRUSTED_CODES.has(code)) return 'check TEMPORAL_TLS_CA: it must be the CA that signed the server\'s certificate (empty trusts only the system\'s root CAs)';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'check TEMPORAL_TLS_SERVER_NAME (or the host in TEMPORAL_ADDRESS): the server\'s certificate is not for that name';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'the server\'s certificate is outside its validity period';
  if (/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/.test(code)) return 'the server requires a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY';
  if (/UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|DECRYPT_ERROR|ACCESS_DENIED/.test(code)) return 'the server refused the client certificate: check TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY (signed by a CA the server trusts)';
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|RECORD_LAYER/.test(code)) return 'the server does not speak TLS on this port: check TEMPORAL_ADDRESS, or set TEMPORAL_TLS=false';
  return 'check TEMPORAL_TLS_CA, TEMPORAL_TLS_CERT/TEMPORAL_TLS_KEY and TEMPORAL_TLS_SERVER_NAME';
}

function hostAndPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(at + 1));
  if (at < 1 || !Number.isInteger(port) || port <= 0) throw new TemporalSettingsError(`Invalid TEMPORAL_ADDRESS: "${address}" is not host:port`);
  return { host, port };
}

// An HTTP/2 client preface and an empty SETTINGS frame: a gRPC server answers with its own SETTINGS.
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

/**
 * Connects as the SDK will (same CA, client certificate and server name), speaks the first bytes of
 * HTTP/2 and waits for the server's first answer. With TLS 1.3 a refused client certificate shows
 * only after the handshake, as an alert on that first read. Rejects with TemporalUnreachable or a
 * TemporalStartupError.
 */
export function probeTemporal(options: TemporalConnectionOptions, timeoutMs = 5_000): Promise<void> {
  const { host, port } = hostAndPort(options.address);
  const where = `Temporal at ${options.address}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    const secure = options.tls;
    const socket: net.Socket = secure
      ? tls.connect({
          host,
          port,
          ALPNProtocols: ['h2'],
          ...(secure.serverRootCACertificate && { ca: Buffer.from(secure.serverRootCACertificate) }),
          ...(secure.clientCertPair && { cert: Buffer.from(secure.clientCertPair.crt), key: Buffer.from(secure.clientCertPair.key) }),
          // SNI takes names only; an IP address is verified against the certificate's IP SANs.
          servername: secure.serverNameOverride ?? (net.isIP(host) ? undefined : host),
          ...(secure.serverNameOverride && { checkServerIdentity: (_host: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(secure.serverNameOverride!, cert) }),
        })
      : net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => finish(new TemporalUnreachable(`no answer within ${formatDuration(timeoutMs)}`)));
    socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(H2_PREFACE));
    socket.once('data', () => finish());
    socket.once('end', () => finish(new TemporalUnreachable(`connection closed before an answer${secure ? '' : ' (if Temporal serves TLS there, set TEMPORAL_TLS=true or TEMPORAL_TLS_CA)'}`)));
    socket.once('close', () => finish(new TemporalUnreachable('connection closed before an answer')));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code;
      if (!secure || (code && UNREACHABLE_CODES.has(code))) {
        finish(new TemporalUnreachable(err.message));
      } else {
        // OpenSSL's alerts read "...:tlsv13 alert certificate required:../deps/...": keep the alert.
        const alert = /alert ([a-z ]+?)(?::|$)/i.exec(err.message)?.[1];
        const what = alert ? `the server sent the TLS alert "${alert}"` : err.message.split('\n')[0];
        finish(new TemporalStartupError(`TLS handshake with ${where} failed: ${what}${code ? ` (${code})` : ''}; ${tlsHint(code)}`));
      }
    });
  });
}

/** The gRPC status of an SDK error (the client's ServiceError carries it in `cause`), and its words. */
function grpcStatus(err: unknown): { code?: number; text: string } {
  const e = err as { code?: unknown; details?: unknown; message?: string; cause?: { code?: unknown; details?: unknown; message?: string } };
  const code = typeof e.code === 'number' ? e.code : typeof e.cause?.code === 'number' ? e.cause.code : undefined;
  const words = [e.details, e.cause?.details, e.cause?.message, e.message].find((w): w is string => typeof w === 'string' && w.trim() !== '');
  return { code, text: (words ?? String(err)).split('\n')[0] };
}

const PERMISSION_DENIED = 7;
const UNAUTHENTICATED = 16;
const NOT_FOUND = 5;
const UNIMPLEMENTED = 12;

/** Refused credentials, as either SDK connection reports them (the native one only in words). */
function refusedCredentials(err: unknown): boolean {
  const { code, text } = grpcStatus(err);
  if (code === PERMISSION_DENIED || code === UNAUTHENTICATED) return true;
  return /PermissionDenied|Unauthenticated|Request unauthorized|does not have permission|PERMISSION_DENIED|UNAUTHENTICATED/.test(`${text} ${(err as Error)?.message ?? ''}`);
}

/** The namespace not registered yet (a server still being set up): worth waiting for. */
export class NamespaceNotFound extends Error {}

/**
 * What a connection must answer before start-up goes on: the namespace, read with the process's
 * credentials (so a key without rights on it stops start-up here, not at the first delivery).
 */
export async function checkNamespace(workflowService: { describeNamespace(request: { namespace: string }): Promise<unknown> }, namespace: string): Promise<void> {
  try {
    await workflowService.describeNamespace({ namespace });
  } catch (err) {
    if (grpcStatus(err).code === NOT_FOUND || /not found/i.test(grpcStatus(err).text)) throw new NamespaceNotFound(`namespace ${namespace} is not registered (yet)`);
    throw err;
  }
}

type ListSearchAttributes = { listSearchAttributes(request: { namespace: string }): Promise<{ customAttributes?: Record<string, number | string> | null }> };

/**
 * Stops start-up when the namespace lacks one of Switchyard's search attributes (or has it with
 * another type), naming it and the command that registers it: otherwise every process starts and
 * reports healthy, and the first DELETE regulation fails. A key not allowed to list them (an
 * operator-only call on some servers) cannot check, and does not stop start-up.
 */
export async function checkSearchAttributes(operatorService: ListSearchAttributes, namespace: string): Promise<void> {
  const refusal = await searchAttributeRefusal(operatorService, namespace);
  if (refusal) throw new TemporalStartupError(refusal);
}

/** What is wrong with the namespace's search attributes, in words naming the fix; undefined when nothing is or the key may not list them. */
export async function searchAttributeRefusal(operatorService: ListSearchAttributes, namespace: string): Promise<string | undefined> {
  let registered: Record<string, number | string>;
  try {
    registered = (await operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  } catch (err) {
    if (refusedCredentials(err) || grpcStatus(err).code === UNIMPLEMENTED) return undefined;
    throw err;
  }
  const problems = searchAttributeProblems(registered);
  return problems.length > 0 ? searchAttributeProblemMessage(namespace, problems) : undefined;
}

/** A freshly opened connection once its namespace answers with every search attribute; closed again when it does not. */
export async function namespaceChecked<C extends { workflowService: Parameters<typeof checkNamespace>[0]; operatorService: ListSearchAttributes; close(): Promise<void> }>(connection: C, namespace: string): Promise<C> {
  try {
    await checkNamespace(connection.workflowService, namespace);
    await checkSearchAttributes(connection.operatorService, namespace);
    return connection;
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for Temporal by the rule above, then returns what `connect` makes of the options. An error
 * from `connect` counts as "not there yet" unless Temporal refused the credentials.
 */
export async function connectWhenReachable<T>(options: TemporalConnectionOptions, rule: ConnectRule, connect: (options: TemporalConnectionOptions) => Promise<T>): Promise<T> {
  const started = Date.now();
  const { retryMs = 1_000, logEveryMs = 10_000 } = rule;
  const described = describeConnection(options);
  let loggedAt: number | undefined;
  for (;;) {
    let reason: string;
    try {
      await probeTemporal(options);
      return await connect(options);
    } catch (err) {
      if (err instanceof TemporalStartupError || err instanceof TemporalSettingsError) throw err;
      if (!(err instanceof TemporalUnreachable) && refusedCredentials(err)) {
        const what = options.apiKey
          ? `check TEMPORAL_API_KEY: it must be valid for this server and allowed on namespace ${options.metadata?.['temporal-namespace'] ?? ''}`
          : `the server wants credentials: set TEMPORAL_API_KEY${options.tls?.clientCertPair ? ' (or have the server authorize TEMPORAL_TLS_CERT)' : ''}`;
        throw new TemporalStartupError(`Temporal at ${options.address} refused Switchyard's credentials (${grpcStatus(err).text}); ${what}`);
      }
      reason = err instanceof NamespaceNotFound ? err.message : grpcStatus(err).text;
    }
    const waited = Date.now() - started;
    if (rule.timeoutMs > 0 && waited >= rule.timeoutMs) {
      throw new TemporalStartupError(`Temporal at ${described} not reachable within ${formatDuration(rule.timeoutMs)} (TEMPORAL_CONNECT_TIMEOUT): ${reason}`);
    }
    if (loggedAt === undefined || Date.now() - loggedAt >= logEveryMs) {
      loggedAt = Date.now();
      rule.logger?.warn({ temporal: described, waitedMs: waited, reason }, `waiting for Temporal at ${options.address}`);
    }
    await sleep(retryMs);
  }
}

/**
 * The API's client: connected once Temporal answers (see the rule above), encrypting with `keyring`
 * (undefined only with PAYLOAD_ENCRYPTION=off).
 */
/** `interceptors` run inside the retry, once per call on the wire (tests count Temporal calls with one). */
export async function connectClient(config: TemporalConnectSettings, keyring: Keyring | undefined, logger?: Logger, timeoutMs = config.temporalConnectTimeout, interceptors: Interceptor[] = []): Promise<Client> {
  const options = temporalConnectionOptions(config);
  const connection = await connectWhenReachable(options, { timeoutMs, logger }, async (o) =>
    namespaceChecked(await Connection.connect({ ...o, connectTimeout: 5_000, interceptors: [cancellableRetryInterceptor(), ...interceptors] }), config.temporalNamespace),
  );
  return new Client({ connection, namespace: config.temporalNamespace, dataConverter: switchyardDataConverter(keyring) });
}
