import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/types';

/**
 * How often the API looks for ended overlaps it was not told about (a rotation through another API
 * process, or one made before this process started).
 */
const LOOK_EVERY_MS = 60_000;

/** Rotations this process makes announce when their overlap ends, so the sweep comes then. */
export interface SigningOverlapEnds {
  endsAt(ms: number): void;
}

export interface SigningOverlapSweep extends SigningOverlapEnds {
  start(): void;
  /** Stops the timer and waits for a sweep in progress (before the store closes). */
  stop(): Promise<void>;
}

/**
 * A rotated-out Standard Webhooks secret is deleted from its row when its overlap ends,
 * not only left unused. The API process sweeps at the earliest end it knows of (from the store, or
 * announced by a rotation it made), and at least every minute; several API processes sweeping the
 * same row delete it once.
 */
export function signingOverlapSweep(destinations: Pick<Store['destinations'], 'dropEndedSigningOverlaps'>, log?: FastifyBaseLogger, clock: () => number = Date.now): SigningOverlapSweep {
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let dueMs = Infinity;
  let sweeping: Promise<void> | undefined;

  const arm = (atMs: number) => {
    if (stopped || atMs >= dueMs) return;
    clearTimeout(timer);
    dueMs = atMs;
    timer = setTimeout(() => void (sweeping = sweep()), Math.max(0, atMs - clock()));
    timer.unref();
  };

  async function sweep(): Promise<void> {
    dueMs = Infinity;
    let next = clock() + LOOK_EVERY_MS;
    try {
      const { dropped, nextEndMs } = await destinations.dropEndedSigningOverlaps(clock());
      if (dropped > 0) log?.info({ dropped }, 'rotated-out signing secrets deleted: their overlap ended');
      if (nextEndMs !== undefined) next = Math.min(next, nextEndMs);
    } catch (err) {
      log?.warn({ err: (err as Error).message }, 'deleting ended signing-secret overlaps failed; tried again at the next look');
    }
    sweeping = undefined;
    arm(next);
  }

  return {
    start() {
      stopped = false;
      arm(clock());
    },
    endsAt: arm,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await sweeping;
    },
  };
}
