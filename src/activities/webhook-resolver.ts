import { readFile } from 'node:fs/promises';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { localAddresses, parseHostsFile, type DnsBudget } from '../delivery/webhook-dns';
import type { Resolve } from './egress-connector';

export interface WebhookResolverOptions {
  budget: DnsBudget;
  /** DNS servers (`ip` or `ip:port`); absent: those of /etc/resolv.conf, as the system's lookup uses. */
  servers?: string[];
  /** The hosts file read before DNS is asked (default /etc/hosts). */
  hostsFile?: string;
}

/** The hosts file is read again at most this often, so an edit (a container's added host) is seen. */
const HOSTS_FILE_MAX_AGE_MS = 5_000;

/** Error codes of a name that exists in no form: the message names the host and the code. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * Resolves a webhook's host to every address it has (IPv4 first, then IPv6), without the libuv
 * thread pool: IP literals as they are; then the hosts file and `localhost` (c-ares does not read
 * the hosts file, so this does, like the system's lookup with `hosts: files dns`); then A and AAAA
 * queries on a resolver of its own, cancelled at the budget's deadline. A lookup that hangs
 * therefore ends within the budget, as an `ETIMEOUT` error, and holds nothing another lookup needs.
 * Search domains of resolv.conf are not applied: a webhook URL names its host fully.
 */
export function webhookResolver(options: WebhookResolverOptions): Resolve {
  const hostsFile = options.hostsFile ?? '/etc/hosts';
  let hosts: { table: Map<string, string[]>; readAt: number } | undefined;

  async function hostsTable(): Promise<Map<string, string[]>> {
    if (!hosts || Date.now() - hosts.readAt > HOSTS_FILE_MAX_AGE_MS) {
      const text = await readFile(hostsFile, 'utf8').catch(() => '');
      hosts = { table: parseHostsFile(text), readAt: Date.now() };
    }
    return hosts.table;
  }

  return async (hostname) => {
    if (isIP(hostname)) return [hostname];
    const local = localAddresses(hostname, await hostsTable());
    if (local) return local;

    const { totalMs, firstTryMs, tries } = options.budget;
    const resolver = new Resolver({ timeout: firstTryMs, tries });
    if (options.servers) resolver.setServers(options.servers);
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      resolver.cancel();
    }, totalMs);
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      if (timedOut) throw dnsError('ETIMEOUT', `DNS lookup of ${hostname} gave no answer within ${totalMs} ms`);
      const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (addresses.length > 0) return addresses;
      const codes = [v4, v6].map((r) => (r.status === 'rejected' ? String((r.reason as { code?: unknown }).code) : 'ENODATA'));
      const code = codes.find((c) => !NOT_FOUND.has(c)) ?? 'ENOTFOUND';
      throw dnsError(code, NOT_FOUND.has(code) ? `${hostname} has no address in DNS` : `DNS lookup of ${hostname} failed (${code})`);
    } finally {
      clearTimeout(deadline);
    }
  };
}

function dnsError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
