import type { Store } from '../store/types';

/** What the ingest steps read data keys through: get a subject's key, made if it has none. */
export type DataKeyReads = Pick<Store['dataKeys'], 'getOrCreate'>;

/**
 * One ingest request's data keys, read once: the archive and the sealing of its deliveries need the
 * same users' keys (the sealing's subjects are among the archive's), and each asking the store was
 * a second read of the same rows (and a second unwrap of every key) per request. A subject asked
 * for again joins the read that asked first, finished or under way. Made per request and dropped
 * with it: a key destroyed by a regulation is never served from here to a later request.
 */
export function requestDataKeys(dataKeys: DataKeyReads): DataKeyReads {
  const reads = new Map<string, Promise<Map<string, Buffer>>>();
  return {
    async getOrCreate(subjectHashes) {
      const missing = [...new Set(subjectHashes)].filter((subject) => !reads.has(subject));
      if (missing.length > 0) {
        const read = dataKeys.getOrCreate(missing);
        for (const subject of missing) reads.set(subject, read);
      }
      const wanted = new Set(subjectHashes);
      const keys = new Map<string, Buffer>();
      for (const read of new Set(subjectHashes.map((subject) => reads.get(subject)!))) {
        for (const [subject, key] of await read) if (wanted.has(subject)) keys.set(subject, key);
      }
      return keys;
    },
  };
}
