import { sql, type Kysely } from 'kysely';
import { connectPostgres, connectSqlite, postgresPool, redactDatabaseUrl, truncateWriteAheadLog } from './connection';
import { cachedDataKeyReads, cachedDestinationReads, cachedErasureReads, cachedSuppressionReads, NotifiedCache } from './notified-cache';
import { listenForStoreChanges, type StoreListener } from './store-notifications';
import { destinationStore, OPENED_DESTINATIONS } from './destinations';
import type { PlainCredentials } from './destination-credentials';
import { OpenedValues } from '../privacy/opened-values';
import { sealPlaintextCredentials } from './credentials-at-rest';
import { destinationFilterStore } from './destination-filters';
import { ensureSchema } from './migrations';
import { personasStore } from './personas';
import { erasedIdHashes, erasureStore } from './erasures';
import { dataKeyStore, OPENED_KEYS } from './data-keys';
import { suppressionStore } from './suppressions';
import type { Suppression } from '../delivery/suppression';
import { hashPlaintextSubjectIds, regulationStore } from './regulations';
import type { Keyring } from '../privacy/keyring';
import { sourceUserStore } from './source-users';
import { sourcesByWriteKeyHash, sourceStore } from './sources';
import { WriteKeyDirectory, writeKeyDirectoryReads } from './write-key-directory';
import { webhookHealthStore } from './webhook-health';
import { messageCountsStore } from './message-counts';
import { flowControlStore } from './flow-control';
import { adminTokenStore } from './admin-tokens';
import { auditLogStore } from './audit-log';
import { writeTransaction } from './write-transaction';
import { messageArchiveStore } from './message-archive';
import { messageFateStore } from './message-fates';
import { replayStore } from './replays';
import { operationalEndpointStore } from './operational-endpoints';
import { cachedOperationalEndpointReads, operationalEndpointCopy } from './operational-endpoint-copy';
import { segmentImportStore } from './segment-imports';
import { functionStore } from './functions';
import { transformationStore } from './transformations';
import { functionRequestStore } from './function-requests';
import { webhookSwitchStore } from './webhook-switches';
import { trackingPlanStore, violationStore } from './tracking-plans';
import type { Tables } from './tables';
import type { Destination, Store } from './types';

export type { Destination, DestinationFilterRecord, DestinationPatch, NewDestination, Regulation, SeenUser, Source, Store, Webhook } from './types';

export interface StoreOptions {
  /** SQLite file; created (with its folder) when missing. Config: DATABASE_PATH. */
  databasePath: string;
  /** `postgres://…`: PostgreSQL instead of the SQLite file. Config: DATABASE_URL. */
  databaseUrl?: string;
  /**
   * PostgreSQL only: serve `destinations.get`, `erasures.erasedAt` and `suppressions.of` from caches kept fresh by
   * LISTEN/NOTIFY, entries at most this old (ms; 0 or absent: no cache). For a worker's attempts;
   * the API reads uncached, so an admin write is always read back as written.
   * Config: DESTINATION_CACHE_TTL (worker).
   */
  destinationCacheTtlMs?: number;
  /**
   * Keys erased-id hashes and regulation records and seals receiver credentials;
   * undefined with PAYLOAD_ENCRYPTION=off, where they stay unkeyed SHA-256, plaintext ids and
   * plaintext credentials as before.
   */
  keyring?: Keyring;
  /** Apply missing migrations at open (default); false: only check, and refuse naming `npm run migrate`. Config: DATABASE_MIGRATE. */
  databaseMigrate?: boolean;
  /**
   * An API process: write keys answered from memory (write-key-directory.ts), and on
   * PostgreSQL a LISTEN connection that hears sources made and deleted. Without it (a worker, a
   * script) `knownWriteKey` is absent.
   */
  writeKeyDirectory?: boolean;
}

/** Opens the settings store and brings its schema up to date (or checks it is); every process calls this at start-up. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const db = options.databaseUrl ? await openPostgres(options.databaseUrl) : connectSqlite(options.databasePath);
  try {
    await ensureSchema(db, { migrate: options.databaseMigrate ?? true, store: options.databaseUrl ? redactDatabaseUrl(options.databaseUrl) : options.databasePath });
    if (options.keyring) {
      await hashPlaintextSubjectIds(db, options.keyring, erasedIdHashes(options.keyring));
      await sealPlaintextCredentials(db, options.keyring);
    }
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const hashes = erasedIdHashes(options.keyring);
  // What this process opened, forgotten on another process's change too.
  const opened = { destinations: new OpenedValues<PlainCredentials>(OPENED_DESTINATIONS), dataKeys: new OpenedValues<Buffer>(OPENED_KEYS) };
  const plain = plainStores(db, options.keyring, opened);
  let { destinations, erasures, dataKeys, suppressions, sources } = plain;
  let listener: StoreListener | undefined;
  const workerCaches = options.databaseUrl && (options.destinationCacheTtlMs ?? 0) > 0;
  const directory = options.writeKeyDirectory ? new WriteKeyDirectory() : undefined;
  if (directory) sources = writeKeyDirectoryReads(sources, () => sourcesByWriteKeyHash(db, options.keyring), directory);
  // Every process's: the endpoints an event is raised to, read once and again after a change.
  const endpointCopy = operationalEndpointCopy();
  const operationalEndpoints = cachedOperationalEndpointReads(plain.operationalEndpoints, endpointCopy);
  // A source or an operational endpoint made or deleted through this process is heard at once, whatever the dialect.
  const transaction: Store['transaction'] = async (work) => {
    try {
      return await plain.transaction(work);
    } finally {
      directory?.changedAll();
      endpointCopy.changedAll();
    }
  };
  if (options.databaseUrl && (workerCaches || directory)) {
    // SQLite needs none: one machine, a local read is microseconds (docs/performance.md).
    const caches = workerCaches
      ? {
          destinations: new NotifiedCache<Destination | undefined>(options.destinationCacheTtlMs!),
          erasures: new NotifiedCache<string | undefined>(options.destinationCacheTtlMs!),
          dataKeys: new NotifiedCache<Buffer | null>(options.destinationCacheTtlMs!),
          suppressions: new NotifiedCache<Suppression | undefined>(options.destinationCacheTtlMs!),
        }
      : undefined;
    listener = await listenForStoreChanges(options.databaseUrl, { ...caches, sources: directory, operationalEndpoints: endpointCopy, opened }, {
      notify: async (channel, payload) => void (await sql`select pg_notify(${channel}, ${payload})`.execute(db)),
    });
    if (caches) {
      destinations = cachedDestinationReads(destinations, caches.destinations);
      erasures = cachedErasureReads(db, erasures, caches.erasures, hashes);
      dataKeys = cachedDataKeyReads(dataKeys, caches.dataKeys);
      suppressions = cachedSuppressionReads(db, suppressions, caches.suppressions, hashes);
    }
  }
  return {
    ...plain,
    sources,
    transaction,
    operationalEndpoints,
    destinations,
    erasures,
    // Cached like the erasure checks (PostgreSQL, the worker): a key destroyed or made NOTIFYs its
    // subject hash and drops that copy on every worker before its next attempt; uncached on SQLite.
    dataKeys,
    // Cached the same way: a suppression or its lifting NOTIFYs the erasure channel (migration 0012).
    suppressions,
    // PostgreSQL's dead row versions go with (auto)vacuum; its WAL is the server's to recycle.
    purgeDeletedRows: async () => (options.databaseUrl ? true : truncateWriteAheadLog(db)),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await listener?.close();
      await db.destroy();
    },
  };
}

type PlainStores = Omit<Store, 'purgeDeletedRows' | 'ping' | 'close'>;

/** The plaintext one store opened (credentials, data keys), shared by its transactions and told by its listener. */
type OpenedByStore = { destinations: OpenedValues<PlainCredentials>; dataKeys: OpenedValues<Buffer> };

/**
 * Every table family over one handle, uncached: the store's own, or a write transaction's (its
 * NOTIFYs go out at commit, so the caches of other processes learn of its changes then).
 */
function plainStores(db: Kysely<Tables>, keyring: Keyring | undefined, opened?: OpenedByStore): PlainStores {
  const hashes = erasedIdHashes(keyring);
  return {
    sources: sourceStore(db, keyring),
    destinations: destinationStore(db, keyring, opened?.destinations),
    regulations: regulationStore(db, keyring),
    destinationFilters: destinationFilterStore(db),
    sourceUsers: sourceUserStore(db),
    erasures: erasureStore(db, hashes),
    dataKeys: dataKeyStore(db, keyring, opened?.dataKeys),
    suppressions: suppressionStore(db, hashes),
    webhookHealth: webhookHealthStore(db),
    messageCounts: messageCountsStore(db),
    flowControl: flowControlStore(db),
    personas: personasStore(db, hashes),
    archive: messageArchiveStore(db),
    fates: messageFateStore(db),
    replays: replayStore(db),
    operationalEndpoints: operationalEndpointStore(db, keyring),
    segmentImports: segmentImportStore(db),
    functions: functionStore(db),
    functionRequests: functionRequestStore(db),
    transformations: transformationStore(db),
    webhookSwitches: webhookSwitchStore(db),
    trackingPlans: trackingPlanStore(db),
    violations: violationStore(db, hashes),
    tokens: adminTokenStore(db),
    audit: auditLogStore(db),
    transaction: (work) => writeTransaction(db, (trx) => work(inTransaction(trx, keyring, opened))),
  };
}

/** A Store whose every call runs in the write transaction `trx` (closing the store is its owner's business). */
function inTransaction(trx: Kysely<Tables>, keyring: Keyring | undefined, opened?: OpenedByStore): Store {
  const refuse = async (): Promise<never> => {
    throw new Error('a transaction store cannot be pinged, purged or closed');
  };
  return { ...plainStores(trx, keyring, opened), purgeDeletedRows: refuse, ping: refuse, close: refuse };
}

/** Fails at start-up, naming the server (never the password), when PostgreSQL cannot be reached. */
async function openPostgres(databaseUrl: string): Promise<Kysely<Tables>> {
  const pool = postgresPool(databaseUrl);
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`PostgreSQL at ${redactDatabaseUrl(databaseUrl)} not reachable: ${(err as Error).message}`);
  }
  return connectPostgres(pool);
}
