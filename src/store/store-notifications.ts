import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { NotifiedCache } from './notified-cache';

/**
 * The PostgreSQL channel the store NOTIFYs on, in the same transaction, whenever a destination, its
 * switched-off webhooks or (by cascade) its source change. The payload is the destination id and
 * nothing else: no URL, header or secret ever goes through it.
 */
export const DESTINATION_CHANNEL = 'switchyard_destinations';

/** The channel a regulation's erasures NOTIFY on, once per statement, with an empty payload: no id, not even hashed. */
export const ERASURE_CHANNEL = 'switchyard_erasures';

/**
 * The channel a data key made, re-wrapped or destroyed NOTIFYs on, once per row, with the subject's
 * keyed hash (the form the `data_keys` table holds, never the id): a worker drops that subject's
 * cached key only, so the first call of each new user does not empty every worker's caches.
 */
export const DATA_KEY_CHANNEL = 'switchyard_data_keys';

/**
 * The channel a source made, renamed or deleted NOTIFYs on, once per statement, with an empty
 * payload (never a write key or its hash): every API reads its directory of write keys again.
 */
export const SOURCE_CHANNEL = 'switchyard_sources';

/**
 * The channel an operational endpoint made, changed or deleted NOTIFYs on, once per statement, with
 * an empty payload (never a URL or secret): every process reads its copy of the endpoints again.
 */
export const OPERATIONAL_ENDPOINT_CHANNEL = 'switchyard_operational_endpoints';

/** Where a listener sends itself a probe (a random token) through another connection, to prove notifications reach it. */
export const PROBE_CHANNEL = 'switchyard_listener_probe';

/** What the listening connection calls itself in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'switchyard-store-listener';

export interface ListenerOptions {
  /** Sends a NOTIFY through another connection than the listener's (the store's pool). */
  notify(channel: string, payload: string): Promise<void>;
  /** How often a probe checks that notifications still arrive, and how long one may take. */
  probeEveryMs?: number;
  /** Wait before connecting again after the LISTEN connection was lost (the caches are bypassed meanwhile). */
  reconnectMs?: number;
}

export interface StoreListener {
  close(): Promise<void>;
}

/** What a change notification tells a cache kept whole (the write-key directory). */
export interface NotifiedWhole {
  changedAll(): void;
  listenerUp(): void;
  listenerDown(): void;
}

export interface NotifiedCaches {
  /** A worker's (DESTINATION_CACHE_TTL); absent in an API process, which reads destinations uncached. */
  destinations?: NotifiedCache<unknown>;
  erasures?: NotifiedCache<unknown>;
  /** Told by the source channel: an API's write keys (write-key-directory.ts). */
  sources?: NotifiedWhole;
  /** Told by the operational endpoint channel: every process's copy of the endpoints (operational-endpoint-copy.ts). */
  operationalEndpoints?: NotifiedWhole;
  /** Told by the data-key channel: that subject's key destroyed, made or re-wrapped (migration 0013). */
  dataKeys?: NotifiedCache<unknown>;
  /** Told by the erasure channel too: an id suppressed or its suppression lifted. */
  suppressions?: NotifiedCache<unknown>;
  /**
   * The plaintext this process opened, forgotten when the row it came from
   * changes or goes in any process: a destination's credentials, a subject's data key.
   */
  opened?: { destinations?: Forgets; dataKeys?: Forgets };
}

/** What holds opened plaintext by row id (privacy/opened-values.ts). */
export interface Forgets {
  forget(ids: Iterable<string>): void;
  forgetAll(): void;
}

/**
 * One dedicated connection (outside the pool: a pooled connection would be handed to queries and
 * its LISTEN lost) that LISTENs on the channels and tells the caches: a destination notification
 * drops that destination, a data-key notification that subject's key, an erasure notification
 * every erasure entry. The caches serve
 * entries only once a probe sent through the pool has arrived on this connection — a LISTEN that
 * succeeds but never hears anything (a connection that died silently, a transaction-pooling
 * PgBouncer in between) must not pass for one that works — and a probe every `probeEveryMs` keeps
 * checking. A connection that errors, ends or misses a probe clears and bypasses both caches until
 * a new one has LISTENed and heard its probe. Resolves after the first attempt to connect, whether
 * or not it succeeded.
 */
export async function listenForStoreChanges(databaseUrl: string, caches: NotifiedCaches, options: ListenerOptions): Promise<StoreListener> {
  const probeEveryMs = options.probeEveryMs ?? 5_000;
  const reconnectMs = options.reconnectMs ?? 1_000;
  // Suppressions change on the erasure channel (a regulation); data keys on their own, per subject.
  const alsoErasures = [caches.suppressions].filter((cache) => cache !== undefined);
  const all: NotifiedWhole[] = [caches.destinations, caches.erasures, ...alsoErasures, caches.dataKeys, caches.sources, caches.operationalEndpoints].filter((cache) => cache !== undefined);
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: LISTENER_APPLICATION_NAME, keepAlive: true, keepAliveInitialDelayMillis: 5_000 });
    const awaited = new Map<string, () => void>();
    let heartbeat: NodeJS.Timeout | undefined;
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      clearTimeout(heartbeat);
      if (current === client) current = undefined;
      for (const cache of all) cache.listenerDown();
      // Changes may go unseen until a new connection listens: nothing opened is kept meanwhile.
      caches.opened?.destinations?.forgetAll();
      caches.opened?.dataKeys?.forgetAll();
      client.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), reconnectMs);
    };
    /** Sends a probe through the pool; true once it came back on this connection within probeEveryMs. */
    const probe = async (): Promise<boolean> => {
      const token = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const heard = new Promise<boolean>((resolve) => {
        awaited.set(token, () => resolve(true));
        timer = setTimeout(() => resolve(false), probeEveryMs);
      });
      try {
        await options.notify(PROBE_CHANNEL, token);
        return await heard;
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
        awaited.delete(token);
      }
    };
    const keepProbing = () => {
      const probeOnce = async () => {
        if (lost || closed) return;
        if (await probe()) keepProbing();
        else onLost();
      };
      heartbeat = setTimeout(() => void probeOnce(), probeEveryMs);
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (message) => {
      if (message.channel === DESTINATION_CHANNEL && message.payload) {
        caches.destinations?.changed(message.payload);
        caches.opened?.destinations?.forget([message.payload]);
      } else if (message.channel === SOURCE_CHANNEL) caches.sources?.changedAll();
      else if (message.channel === OPERATIONAL_ENDPOINT_CHANNEL) caches.operationalEndpoints?.changedAll();
      else if (message.channel === ERASURE_CHANNEL) {
        caches.erasures?.changedAll();
        for (const cache of alsoErasures) cache.changedAll();
      } else if (message.channel === DATA_KEY_CHANNEL && message.payload) {
        caches.dataKeys?.changed(message.payload);
        caches.opened?.dataKeys?.forget([message.payload]);
      }
      else if (message.channel === PROBE_CHANNEL && message.payload) awaited.get(message.payload)?.();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${DESTINATION_CHANNEL}; LISTEN ${ERASURE_CHANNEL}; LISTEN ${DATA_KEY_CHANNEL}; LISTEN ${SOURCE_CHANNEL}; LISTEN ${OPERATIONAL_ENDPOINT_CHANNEL}; LISTEN ${PROBE_CHANNEL}`);
    } catch {
      onLost();
      return;
    }
    if (!(await probe())) {
      onLost();
      return;
    }
    if (closed || lost) {
      await client.end().catch(() => undefined);
      return;
    }
    current = client;
    for (const cache of all) cache.listenerUp();
    keepProbing();
  }

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      for (const cache of all) cache.listenerDown();
      // Changes may go unseen until a new connection listens: nothing opened is kept meanwhile.
      caches.opened?.destinations?.forgetAll();
      caches.opened?.dataKeys?.forgetAll();
      await current?.end().catch(() => undefined);
    },
  };
}
