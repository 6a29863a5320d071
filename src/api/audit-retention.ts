import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/types';

const SWEEP_EVERY_MS = 3_600_000;

export interface AuditRetention {
  start(): void;
  /** Stops the timer and waits for a sweep in progress (before the store closes). */
  stop(): Promise<void>;
}

/**
 * AUDIT_RETENTION (the append-only log had no way to shrink): every API process
 * deletes the rows older than it at start and then hourly; several processes sweeping delete each
 * row once. 0 keeps every row. The database refuses to delete a row younger than its floor
 * (migration 0024), and config.ts refuses a retention below it, so this can never erase recent history.
 */
export function auditRetention(audit: Pick<Store['audit'], 'prune'>, retentionMs: number, log?: FastifyBaseLogger, clock: () => number = Date.now): AuditRetention {
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> = Promise.resolve();

  async function sweep(): Promise<void> {
    try {
      const deleted = await audit.prune(new Date(clock() - retentionMs).toISOString());
      if (deleted > 0) log?.info({ deleted }, 'audit log rows past AUDIT_RETENTION deleted');
    } catch (err) {
      log?.warn({ err: (err as Error).message }, 'audit log retention sweep failed; tried again at the next sweep');
    }
  }

  return {
    start() {
      if (retentionMs <= 0 || timer) return;
      sweeping = sweep();
      timer = setInterval(() => void (sweeping = sweeping.then(sweep)), SWEEP_EVERY_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
