import { createHash } from 'node:crypto';
import type { Agent } from 'undici';
import type { TlsSettings } from '../mappings/types';

/** Client-certificate pools kept per worker; past this many the least recently used one is closed. */
const MAX_TLS_AGENTS = 100;

/**
 * The HTTP pool a destination's requests go through: the worker's shared one, or for a
 * destination with mutual TLS one pool per client certificate (a connection presents the
 * certificate of the pool it belongs to). Pools are keyed by a hash of the certificate and key, so
 * a new certificate gets a new pool at once and no key is kept as a map key.
 */
export function webhookAgents(shared: Agent, make: (tls: TlsSettings) => Agent): (tls: TlsSettings | null) => Agent {
  const pools = new Map<string, Agent>();
  return (tls) => {
    if (!tls) return shared;
    const key = createHash('sha256').update(tls.certificate).update('\u0000').update(tls.privateKey).digest('hex');
    let agent = pools.get(key);
    if (agent) pools.delete(key);
    else {
      agent = make(tls);
      if (pools.size >= MAX_TLS_AGENTS) {
        const [oldestKey, oldest] = pools.entries().next().value!;
        pools.delete(oldestKey);
        void oldest.close().catch(() => undefined);
      }
    }
    pools.set(key, agent);
    return agent;
  };
}
