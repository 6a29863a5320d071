import type { Config } from '../config';

export type TrustProxy = Config['trustProxy'];

/**
 * TRUST_PROXY as Fastify's `trustProxy` option. A hop count goes in as proxy-addr's trust function
 * (`hop` counts from the socket, 0 first), as Express reads one: Fastify 5 reads a bare number as
 * "trust nothing".
 */
export function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  return (_address, hop) => hop < setting;
}

/**
 * The client address a per-address limit counts: the first one not vouched for by a trusted proxy
 * (Fastify's request.ip). With TRUST_PROXY=true every hop is trusted and request.ip is the leftmost
 * X-Forwarded-For entry, which the client writes itself; the entry the nearest proxy appended
 * (request.ips[1], after the socket's own) is the one it cannot choose.
 */
export function limitedAddress(request: { ip: string; ips?: string[] }, setting: TrustProxy): string {
  if (setting === true) return request.ips?.[1] ?? request.ip;
  return request.ip;
}
