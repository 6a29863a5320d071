import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables';

/** What the counts call rows stored as given, under no master key (PAYLOAD_ENCRYPTION=off, or written before keys). */
const PLAINTEXT_CREDENTIALS = '(plaintext)';

/**
 * How many rows of a table each master key seals, by the table's key-id column: what
 * `npm run keys:rewrap` prints before and after, and what tells an operator an old key can go.
 */
export async function countsByMasterKey(db: Kysely<Tables>, table: 'data_keys' | 'destinations' | 'operational_endpoints', keyIdColumn: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ key_id: string | null; count: string | number }>`select ${sql.ref(keyIdColumn)} as key_id, count(*) as count from ${sql.table(table)} group by ${sql.ref(keyIdColumn)}`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.key_id ?? PLAINTEXT_CREDENTIALS, Number(row.count)]));
}
