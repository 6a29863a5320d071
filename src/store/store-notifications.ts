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

/** What the listening connection calls itself in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'switchyard-store-listener';

/** Wait before connecting again after the LISTEN connection dropped (the caches are bypassed meanwhile). */
const RECONNECT_MS = 1_000;

export interface StoreListener {
  close(): Promise<void>;
}

export interface NotifiedCaches {
  destinations: NotifiedCache<unknown>;
  erasures: NotifiedCache<unknown>;
}

/**
 * One dedicated connection (outside the pool: a pooled connection would be handed to queries and
 * its LISTEN lost) that LISTENs on both channels and tells the caches: a destination notification
 * drops that destination, an erasure notification drops every erasure entry; the connection going
 * away clears and bypasses both caches until LISTEN is in place again. Resolves after the first
 * attempt to connect, whether or not it succeeded.
 */
export async function listenForStoreChanges(databaseUrl: string, caches: NotifiedCaches): Promise<StoreListener> {
  const all = [caches.destinations, caches.erasures];
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    // Keep-alive so a connection that died without a FIN is noticed; the TTL covers the time until then.
    const client = new pg.Client({ connectionString: databaseUrl, application_name: LISTENER_APPLICATION_NAME, keepAlive: true, keepAliveInitialDelayMillis: 5_000 });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (current === client) current = undefined;
      for (const cache of all) cache.listenerDown();
      client.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect(), RECONNECT_MS);
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (message) => {
      if (message.channel === DESTINATION_CHANNEL && message.payload) caches.destinations.changed(message.payload);
      else if (message.channel === ERASURE_CHANNEL) caches.erasures.changedAll();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${DESTINATION_CHANNEL}; LISTEN ${ERASURE_CHANNEL}`);
    } catch {
      onLost();
      return;
    }
    if (closed || lost) {
      await client.end().catch(() => undefined);
      return;
    }
    current = client;
    for (const cache of all) cache.listenerUp();
  }

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      for (const cache of all) cache.listenerDown();
      await current?.end().catch(() => undefined);
    },
  };
}
