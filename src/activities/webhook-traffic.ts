/**
 * What this worker knows about the attempts it is making to each webhook URL (keyed by destination
 * and URL), used to keep one misbehaving receiver from slowing the others down:
 *
 * - at most `maxInFlight` attempts to one webhook at once. The worker's activity slots are shared
 *   by every destination; without a cap, a receiver that hangs until the timeout (or answers after
 *   minutes) would soon hold all of them. An attempt beyond the cap does not wait in its slot: it
 *   comes back at once as busy, and the workflow waits its turn on the same URL (not a failed
 *   attempt: no failover to the next URL, no round backoff).
 * - whether the webhook is known to answer fast (its last attempt here took less than
 *   `slowAfterMs`, and none in flight has been running that long). A first attempt runs as a local
 *   activity inside the workflow task only then: a local activity that hangs holds its workflow
 *   task, and with it the worker's intake of new workflow tasks (measured: one hanging local
 *   attempt stalled every other delivery of the worker for the whole timeout). A webhook not seen
 *   yet, or slow, gets its first attempt as a regular activity, under the cap above.
 * - attempts waiting in this worker for room under the cap (the slow lane, delivery/slow-lane.ts):
 *   first come, first served, and ahead of any attempt that asks later.
 */
/** Frees an attempt's room; `durationMs` when a request went out (how fast the webhook answered). */
export type Finish = (durationMs?: number) => void;

export class WebhookTraffic {
  private readonly started = new Map<string, Set<number>>();
  private readonly lastWasFast = new Set<string>();
  private readonly waiting = new Map<string, (() => void)[]>();

  /** `maxInFlight` 0 means no cap. */
  constructor(
    readonly maxInFlight: number,
    readonly slowAfterMs: number,
  ) {}

  /**
   * A `finish` function when there is room for one more attempt under `key` and none waits for it,
   * undefined otherwise. `finish(durationMs)` frees the room and records how fast the webhook
   * answered; `finish()` frees it without (nothing was sent).
   */
  tryStart(key: string, nowMs: number): Finish | undefined {
    const running = this.started.get(key);
    if (this.maxInFlight > 0 && ((running?.size ?? 0) >= this.maxInFlight || this.waiting.has(key))) return undefined;
    return this.start(key, nowMs);
  }

  /**
   * Like tryStart, but when there is no room waits for it, in this process, at most `maxWaitMs`:
   * the attempts that found their webhook busy wait here, each holding one slow-lane slot, instead
   * of asking again through Temporal (which, for a backlog of thousands, was a stream of tasks
   * that delayed every other destination). Undefined when no room came in time.
   */
  waitToStart(key: string, maxWaitMs: number, now: () => number = Date.now): Promise<Finish | undefined> {
    const finish = this.tryStart(key, now());
    if (finish) return Promise.resolve(finish);
    return new Promise((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      this.waiting.set(key, queue);
      const wake = () => {
        clearTimeout(timer);
        resolve(this.start(key, now()));
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(wake), 1);
        if (queue.length === 0) this.waiting.delete(key);
        resolve(undefined);
      }, maxWaitMs);
      queue.push(wake);
    });
  }

  waitingFor(key: string): number {
    return this.waiting.get(key)?.length ?? 0;
  }

  private start(key: string, nowMs: number): Finish {
    const running = this.started.get(key) ?? new Set<number>();
    // A Set of start times: two attempts starting in the same millisecond need distinct entries.
    let token = nowMs;
    // (1e-6 alone is lost to rounding next to an epoch time in ms, and the loop would never end.)
    while (running.has(token)) token += Math.max(1e-6, token * Number.EPSILON);
    running.add(token);
    this.started.set(key, running);
    let finished = false;
    return (durationMs) => {
      if (finished) return;
      finished = true;
      running.delete(token);
      if (running.size === 0) this.started.delete(key);
      if (durationMs !== undefined) {
        if (durationMs < this.slowAfterMs) this.lastWasFast.add(key);
        else this.lastWasFast.delete(key);
      }
      // The room goes to the longest waiter, in the same turn, before any later tryStart.
      const queue = this.waiting.get(key);
      const next = queue?.shift();
      if (queue?.length === 0) this.waiting.delete(key);
      next?.();
    };
  }

  inFlight(key: string): number {
    return this.started.get(key)?.size ?? 0;
  }

  answersFast(key: string, nowMs: number): boolean {
    if (!this.lastWasFast.has(key)) return false;
    for (const startedAt of this.started.get(key) ?? []) if (nowMs - startedAt >= this.slowAfterMs) return false;
    return true;
  }
}
