import { buildConnector } from 'undici';
import { EGRESS_REFUSED, egressRefusal, egressRefusalReason, type Cidr } from '../delivery/egress';
import { triesNextAddress } from '../delivery/webhook-dns';

export class EgressRefusedError extends Error {
  readonly code = EGRESS_REFUSED;
}

/** Every address of a host name (activities/webhook-resolver.ts does it with a deadline, off the thread pool). */
export type Resolve = (hostname: string) => Promise<string[]>;

/**
 * An undici connector that resolves the host itself, checks every address against the egress
 * rule, and connects to an address it checked: the name is never resolved a second time, so a
 * DNS answer that changes between check and connect (rebinding) cannot slip through. TLS still
 * verifies the certificate against the URL's host name, which undici passes as `servername`.
 * When an admitted address refuses the connection, the next admitted one is tried, in the order
 * resolved (a name with a dead IPv6 address or one server down still reaches the others).
 */
export function egressConnector(allowlist: Cidr[], connectOptions: buildConnector.BuildOptions, resolve: Resolve): buildConnector.connector {
  const connect = buildConnector(connectOptions);
  return (options, callback) => {
    resolve(options.hostname).then(
      (addresses) => {
        const refusals = addresses.map((address) => egressRefusal(address, allowlist));
        const admitted = addresses.filter((_, i) => refusals[i] === undefined);
        if (admitted.length === 0) {
          const reason = refusals[0] ?? `${options.hostname} did not resolve to any address`;
          return callback(new EgressRefusedError(egressRefusalReason(options.hostname, reason)), null);
        }
        const connectTo = (index: number) =>
          connect({ ...options, hostname: admitted[index] }, (err, socket) => {
            if (err && index + 1 < admitted.length && triesNextAddress((err as { code?: unknown }).code)) return connectTo(index + 1);
            if (err) return callback(err, null);
            callback(null, socket);
          });
        connectTo(0);
      },
      (err: Error) => callback(err, null),
    );
  };
}
