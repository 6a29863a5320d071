import { lookup } from 'node:dns/promises';
import { buildConnector } from 'undici';
import { EGRESS_REFUSED, egressRefusal, egressRefusalReason, type Cidr } from '../delivery/egress';

export class EgressRefusedError extends Error {
  readonly code = EGRESS_REFUSED;
}

export type Resolve = (hostname: string) => Promise<string[]>;

const resolveAll: Resolve = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * An undici connector that resolves the host itself, checks every address against the egress
 * rule, and connects to an address it checked: the name is never resolved a second time, so a
 * DNS answer that changes between check and connect (rebinding) cannot slip through. TLS still
 * verifies the certificate against the URL's host name, which undici passes as `servername`.
 */
export function egressConnector(allowlist: Cidr[], connectOptions: buildConnector.BuildOptions, resolve: Resolve = resolveAll): buildConnector.connector {
  const connect = buildConnector(connectOptions);
  return (options, callback) => {
    resolve(options.hostname).then(
      (addresses) => {
        const refusals = addresses.map((address) => egressRefusal(address, allowlist));
        const index = refusals.findIndex((refusal) => refusal === undefined);
        if (index < 0) {
          const reason = refusals[0] ?? `${options.hostname} did not resolve to any address`;
          return callback(new EgressRefusedError(egressRefusalReason(options.hostname, reason)), null);
        }
        connect({ ...options, hostname: addresses[index] }, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
}
