/**
 * The SQL shape of the store, as Kysely sees it. Only src/store reads these rows; everything
 * else gets the domain records of ./types. Column types stay portable (text and integer, JSON as
 * text) so a Postgres dialect can later run the same migrations and queries.
 */

export interface SourceRow {
  id: string;
  name: string;
  /** SHA-256 (hex) of the write key: the key itself is never stored. */
  write_key_hash: string;
  write_key_hint: string;
  created_at: string;
}

export interface DestinationRow {
  id: string;
  source_id: string;
  name: string;
  /** 0 or 1: SQLite has no boolean type. */
  enabled: number;
  shared_secret: string | null;
  /** JSON array of {url, headers}. */
  webhooks: string;
  created_at: string;
  updated_at: string;
}

export interface RegulationRow {
  id: string;
  regulation_type: string;
  subject_type: string;
  /** JSON array of strings. */
  subject_ids: string;
  created_at: string;
}

export interface Tables {
  sources: SourceRow;
  destinations: DestinationRow;
  regulations: RegulationRow;
}
