import { currentCopy, WholeTableCopy } from './whole-table-copy';
import type { Source, Store } from './types';
import { hashWriteKey } from './write-keys';

/**
 * How old the directory may be when no notification can tell it of a change: on SQLite (other
 * processes' writes cannot be heard) and on PostgreSQL while the LISTEN connection is down. A
 * source deleted by another process keeps its key working at most this long; reading the whole
 * sources table again (a few rows) at most once per this window costs the store next to nothing.
 */
export const WRITE_KEYS_UNNOTIFIED_FOR_MS = 1_000;

/**
 * Every source's write key (as its hash) in memory, so that ingestion answers a valid key without a
 * lookup, and before the per-address limit on unknown keys: a valid key is never
 * refused for what others from its address sent. The whole table is read at once and read again
 * after a change: on PostgreSQL a NOTIFY on SOURCE_CHANNEL (store-notifications.ts), in this
 * process a committed admin change (openStore), and otherwise after WRITE_KEYS_UNNOTIFIED_FOR_MS.
 *
 * A whole-table copy (whole-table-copy.ts), whose decisions are a table test
 * (test/unit/write-key-directory.test.ts).
 */
export class WriteKeyDirectory extends WholeTableCopy<Map<string, Source>> {
  constructor(unnotifiedForMs = WRITE_KEYS_UNNOTIFIED_FOR_MS) {
    super(new Map(), unnotifiedForMs);
  }

  /** The source of a write-key hash, as of the last reading. */
  find(writeKeyHash: string): Source | undefined {
    return this.value.get(writeKeyHash);
  }
}

/**
 * The sources store with write keys answered from `directory`: `knownWriteKey` from memory only
 * (the table read again, whole and once for all callers, when the directory says so), and
 * `findByWriteKey` a lookup as before that also notices a key the directory has not heard of yet
 * (a source made a moment ago by another process) and has the table read again.
 */
export function writeKeyDirectoryReads(sources: Store['sources'], readAll: () => Promise<Map<string, Source>>, directory: WriteKeyDirectory, clock: () => number = Date.now): Store['sources'] {
  const current = currentCopy(directory, readAll, clock);
  return {
    ...sources,
    create: (name, fields) => sources.create(name, fields).finally(() => directory.changedAll()),
    // A changed write key: the old one stops working at once in this process.
    update: (id, fields) => sources.update(id, fields).finally(() => directory.changedAll()),
    delete: (id) => sources.delete(id).finally(() => directory.changedAll()),
    async knownWriteKey(writeKey) {
      await current();
      return directory.find(hashWriteKey(writeKey));
    },
    async findByWriteKey(writeKey) {
      const source = await sources.findByWriteKey(writeKey);
      if (source && !directory.find(hashWriteKey(writeKey))) directory.changedAll();
      return source;
    },
  };
}
