/**
 * How a worker resolves a webhook's host name: the decisions, apart from the resolver
 * that does the I/O (activities/webhook-resolver.ts). `dns.lookup` ran on libuv's four-thread pool
 * with no timeout, so four lookups that hang blocked every new connection of the worker; the
 * resolver asks DNS servers itself (c-ares, on the event loop) within a budget below the attempt's
 * timeout, and reads the hosts file deliberately, as the system's lookup did.
 */

/** A lookup's budget: its hard deadline, and the resolver's first-try timeout and tries within it. */
export interface DnsBudget {
  totalMs: number;
  firstTryMs: number;
  tries: number;
}

/** Tries per DNS server: one retry for a lost UDP packet. */
const DNS_TRIES = 2;

/**
 * Half the attempt's timeout: a name that does not resolve then fails as a DNS error, which an
 * operator can act on, and a slow answer still leaves time to connect and be answered. c-ares
 * doubles its timeout on each retry, so `tries` tries of `firstTryMs` fit in about 3 × `firstTryMs`;
 * the deadline is enforced on top (the lookup is cancelled).
 */
export function dnsBudget(deliveryTimeoutMs: number): DnsBudget {
  const totalMs = Math.max(1, Math.floor(deliveryTimeoutMs / 2));
  return { totalMs, firstTryMs: Math.max(1, Math.floor(totalMs / 3)), tries: DNS_TRIES };
}

/**
 * Connection errors after which the next resolved address is tried: nothing was sent, and the
 * address (not the receiver) is the problem, as with an IPv6 address on a host without an IPv6
 * route, or one of several servers down. A TLS failure or a timeout is not tried again elsewhere.
 */
const NEXT_ADDRESS_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

export function triesNextAddress(code: unknown): boolean {
  return typeof code === 'string' && NEXT_ADDRESS_CODES.has(code);
}

/**
 * A hosts file (hosts(5)): each name or alias → its addresses, in file order. Names are matched
 * without case; `#` starts a comment.
 */
export function parseHostsFile(text: string): Map<string, string[]> {
  const hosts = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || names.length === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      const addresses = hosts.get(key) ?? [];
      if (!addresses.includes(address)) addresses.push(address);
      hosts.set(key, addresses);
    }
  }
  return hosts;
}

/**
 * What a host name resolves to without asking DNS: the hosts file's addresses for it, else for
 * `localhost` and names under `.localhost` the loopback addresses (RFC 6761 reserves them, and
 * the system's lookup answers them so even when the hosts file does not list them); else
 * undefined (ask DNS). A trailing dot (a fully qualified name) changes nothing.
 */
export function localAddresses(hostname: string, hosts: Map<string, string[]>): string[] | undefined {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  const listed = hosts.get(name);
  if (listed) return listed;
  if (name === 'localhost' || name.endsWith('.localhost')) return ['127.0.0.1', '::1'];
  return undefined;
}
