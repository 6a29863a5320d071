import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook request may connect to. Users type webhook URLs, so without this rule
 * Switchyard would POST into its own network for them: the cloud metadata service, the admin API,
 * a database on 10.x. Only globally routable unicast addresses are reachable by default; an
 * operator opens private ranges on purpose with EGRESS_ALLOWLIST.
 */

/** The error code of an attempt refused by this rule (classified permanent in ./outcome). */
export const EGRESS_REFUSED = 'SWITCHYARD_EGRESS_REFUSED';

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `10.0.0.0/8, ::1/128`; a bad entry names itself so start-up fails with a clear message. */
export function parseAllowlist(entries: string[]): Cidr[] {
  return entries.map((entry) => {
    try {
      return ipaddr.parseCIDR(entry);
    } catch {
      throw new Error(`"${entry}" is not a CIDR range (e.g. 127.0.0.0/8 or fd00::/8)`);
    }
  });
}

/** ipaddr.js range names, in words an operator reads in an attempt's failure reason. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (the range of the 169.254.169.254 cloud metadata service)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (RFC 6598) address',
  private: 'a private (RFC 1918) address',
  reserved: 'a reserved or documentation address',
  as112: 'an AS112 address',
  amt: 'an AMT relay address',
  uniqueLocal: 'a unique-local IPv6 address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  deprecatedSiteLocal: 'a site-local IPv6 address',
  discard: 'a discard-only IPv6 address',
  rfc6145: 'an IPv4-translated IPv6 address',
  rfc6052: 'a NAT64 IPv6 address',
  '6to4': 'a 6to4 IPv6 address',
  teredo: 'a Teredo IPv6 address',
  benchmarking: 'a benchmarking address',
  as112v6: 'an AS112 address',
  deprecatedOrchid: 'an ORCHID IPv6 address',
  orchid2: 'an ORCHIDv2 IPv6 address',
  droneRemoteIdProtocolEntityTags: 'a DRIP IPv6 address',
  segmentRouting: 'a segment-routing IPv6 address',
};

/** The only IPv6 block allocated for global unicast (RFC 4291); `::a.b.c.d` and the like fall outside it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

function allowed(address: ipaddr.IPv4 | ipaddr.IPv6, allowlist: Cidr[]): boolean {
  return allowlist.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits));
}

/**
 * Why a connection to `address` (an IP literal, as resolved) is refused; undefined when it may go
 * ahead. An IPv4-mapped IPv6 address is refused like any non-global one, but its IPv4 form also
 * counts for the allowlist, so `127.0.0.0/8` admits `::ffff:127.0.0.1`.
 */
export function egressRefusal(address: string, allowlist: Cidr[]): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  if (allowed(parsed, allowlist)) return undefined;
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    if (allowed((parsed as ipaddr.IPv6).toIPv4Address(), allowlist)) return undefined;
  }
  const range = parsed.range();
  if (range !== 'unicast') return `${address} is ${RANGE_WORDS[range] ?? `a non-global address (${range})`}`;
  if (parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6)) return `${address} is not a global unicast IPv6 address`;
  return undefined;
}

/** The failure reason an attempt carries, so an operator sees what was refused and the fix. */
export function egressRefusalReason(hostname: string, refusal: string): string {
  const what = refusal.startsWith(`${hostname} `) ? refusal : `${hostname} resolves to ${refusal.replace(' is ', ', ')}`;
  return `egress refused: ${what}; no request was sent (EGRESS_ALLOWLIST can admit a private range on purpose)`;
}

/** Names that mean this machine whatever a resolver says (RFC 6761), so they are refused like 127.0.0.1. */
const LOCALHOST_NAME = /^(?:localhost|[^.]+(?:\.[^.]+)*\.localhost)\.?$/i;

/**
 * Why a URL typed into a setting could never be sent to, decided when it is saved: its host is an IP
 * address (or `localhost`) the egress rule refuses. A name is resolved only when sending, where the
 * same rule holds for whatever it resolves to then (a save-time lookup could be answered differently
 * later), so names pass here. Undefined for a URL that does not parse: its own rule says why.
 */
export function savedUrlEgressRefusal(url: string, allowlist: Cidr[]): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return undefined;
  }
  const literal = hostname.replace(/^\[(.*)\]$/, '$1');
  if (LOCALHOST_NAME.test(literal)) {
    const refusal = egressRefusal('127.0.0.1', allowlist);
    return refusal && `${hostname} is this machine (${refusal.replace('127.0.0.1 is ', '')}); Switchyard never sends there (EGRESS_ALLOWLIST can admit a private range on purpose)`;
  }
  if (!ipaddr.isValid(literal)) return undefined;
  const refusal = egressRefusal(literal, allowlist);
  return refusal && `${refusal}; Switchyard never sends there (EGRESS_ALLOWLIST can admit a private range on purpose)`;
}
