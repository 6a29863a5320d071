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
 */
export class WebhookTraffic {
  private readonly started = new Map<string, Set<number>>();
  private readonly lastWasFast = new Set<string>();

  /** `maxInFlight` 0 means no cap. */
  constructor(
    readonly maxInFlight: number,
    readonly slowAfterMs: number,
  ) {}

  /** A `finish` function when there is room for one more attempt under `key`, undefined when there is not. */
  tryStart(key: string, nowMs: number): ((durationMs: number) => void) | undefined {
    const running = this.started.get(key) ?? new Set<number>();
    if (this.maxInFlight > 0 && running.size >= this.maxInFlight) return undefined;
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
      if (durationMs < this.slowAfterMs) this.lastWasFast.add(key);
      else this.lastWasFast.delete(key);
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
