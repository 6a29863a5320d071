/**
 * Archive sizing: archives MESSAGES (default 20,000) of the bench's track call (bench/phase.ts) through
 * the ingest step itself (src/messages/archive-calls.ts: sealed under 997 users' data keys) into a
 * fresh store, and prints the archive's bytes per message on disk, indexes included.
 *
 *   DATABASE_URL=postgres://…/empty_db PAYLOAD_KEYS_FILE=test/fixtures/payload-keys npx tsx scripts/archive-size.ts
 *   DATABASE_PATH=/tmp/size.db PAYLOAD_KEYS_FILE=test/fixtures/payload-keys npx tsx scripts/archive-size.ts
 */
import { sql } from 'kysely';
import { loadConfig } from '../src/config';
import { acceptCalls } from '../src/messages/accept-calls';
import { callArchiver } from '../src/messages/archive-calls';
import { loadKeyring } from '../src/privacy/load-keyring';
import { openStore } from '../src/store';
import { connectPostgres, connectSqlite, postgresPool } from '../src/store/connection';
import { archiveBytes } from '../src/store/message-archive';

const MESSAGES = Number(process.env.MESSAGES ?? 20_000);
const BATCH = 100;

const track = (i: number) => ({
  type: 'track' as const,
  fields: {
    type: 'track',
    messageId: `size-${i}-${Date.now()}`,
    userId: `user-${i % 997}`,
    event: 'Order Completed',
    properties: { orderId: `order-${i}`, total: 42.5, currency: 'EUR', items: 3 },
    context: { library: { name: 'switchyard-bench', version: '1' } },
    timestamp: new Date().toISOString(),
  },
});

async function main(): Promise<void> {
  const config = loadConfig();
  const keyring = loadKeyring(config);
  const store = await openStore({ ...config, keyring });
  const archive = callArchiver(store, keyring);
  const { source } = await store.sources.create('archive sizing');
  const sqliteBytes = async () => {
    const db = connectSqlite(config.databasePath);
    const { rows } = await sql<{ bytes: number }>`select sum(pgsize) as bytes from dbstat where name like 'message_archive%' or name = 'sqlite_autoindex_message_archive_1'`.execute(db);
    await db.destroy();
    return Number(rows[0]?.bytes ?? 0);
  };
  for (let first = 0; first < MESSAGES; first += BATCH) {
    const accepted = acceptCalls(Array.from({ length: Math.min(BATCH, MESSAGES - first) }, (_, k) => track(first + k)), { receivedAtMs: Date.now(), inBatch: true });
    if ('problem' in accepted) throw new Error(accepted.problem);
    await archive(source.id, accepted.accepted, store.dataKeys);
  }
  let bytes: number;
  if (config.databaseUrl) {
    const db = connectPostgres(postgresPool(config.databaseUrl));
    await sql`vacuum analyze message_archive`.execute(db);
    bytes = await archiveBytes(db);
    await db.destroy();
  } else bytes = await sqliteBytes();
  await store.close();
  console.log(JSON.stringify({ store: config.databaseUrl ? 'postgres' : 'sqlite', messages: MESSAGES, bytes, bytesPerMessage: Math.round(bytes / MESSAGES) }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
