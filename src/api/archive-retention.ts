import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/types';

/** The sweep runs at most this often, and at least every hour (a PostgreSQL partition goes whole days at a time). */
const SWEEP_AT_MOST_EVERY_MS = 1_000;
const SWEEP_AT_LEAST_EVERY_MS = 3_600_000;

export interface ArchiveRetention {
  start(): void;
  /** Stops the timer and waits for a sweep in progress (before the store closes). */
  stop(): Promise<void>;
}

/** How often retention is swept: a quarter of ARCHIVE_RETENTION, between a second and an hour. */
export const sweepIntervalMs = (retentionMs: number) => Math.min(SWEEP_AT_LEAST_EVERY_MS, Math.max(SWEEP_AT_MOST_EVERY_MS, Math.floor(retentionMs / 4)));

/**
 * ARCHIVE_RETENTION, swept by every API process (the processes that write the archive):
 * at start and then every sweepIntervalMs, it makes the coming days' partitions (PostgreSQL) and
 * removes what is past retention (PostgreSQL drops whole day partitions; SQLite deletes rows).
 * Several processes sweeping at once remove each thing once. ARCHIVE_RETENTION=0 sweeps too, with
 * nothing kept: the archive is off, and what an earlier run archived goes at start.
 */
export function archiveRetention(archive: Pick<Store['archive'], 'prepare' | 'prune'>, retentionMs: number, log?: FastifyBaseLogger, clock: () => number = Date.now, fates?: Pick<Store['fates'], 'prune'>): ArchiveRetention {
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> = Promise.resolve();

  async function sweep(): Promise<void> {
    try {
      const now = clock();
      if (retentionMs > 0) await archive.prepare(now);
      const { deleted, droppedPartitions } = await archive.prune(now, retentionMs);
      if (deleted > 0 || droppedPartitions.length > 0) log?.info({ deleted, droppedPartitions }, 'archived messages past ARCHIVE_RETENTION removed');
      // The calls' fates are kept as long as the calls (one knob for what grows per message): row by
      // row, on both stores (a fate row is a few hundred bytes; the archive's day partitions are for its bodies).
      if (fates) await fates.prune(new Date(now - retentionMs).toISOString());
    } catch (err) {
      log?.warn({ err: (err as Error).message }, 'archive retention sweep failed; tried again at the next sweep');
    }
  }

  return {
    start() {
      if (timer) return;
      sweeping = sweep();
      // 0 keeps nothing: the archive written before is removed at start, and the
      // hourly sweep removes what a process still archiving wrote meanwhile (a rolling restart).
      timer = setInterval(() => void (sweeping = sweeping.then(sweep)), retentionMs <= 0 ? SWEEP_AT_LEAST_EVERY_MS : sweepIntervalMs(retentionMs));
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
