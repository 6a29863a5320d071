import { Context } from '@temporalio/activity';
import { BoundedMap } from '../bounded-map';

/** How long an accepted attempt is remembered: far past Temporal's 10 s workflow task timeout and a lost attempt's next try. */
const REMEMBER_MS = 5 * 60_000;
/**
 * The most accepted attempts remembered at once (about 150 bytes each, so at most about 15 MB);
 * past it the least recently used is forgotten first. At 300 accepted attempts a second that still covers the
 * five minutes above.
 */
const MAX_REMEMBERED = 100_000;

export interface Accepted {
  webhookIndex: number;
  status: number;
  at: number;
}

/**
 * What this worker's receivers already accepted, per delivery run and lane (a destination, or one
 * mapping of it), so the worker never sends a message to a lane a second time in the same run
 * when nothing failed but a clock:
 * - A first attempt runs as a local activity inside its workflow task. When the worker stalls (a
 *   long GC pause, a starved event loop) past Temporal's workflow task timeout after the receiver
 *   answered, Temporal runs the task again from history, which has no record of the attempt, and
 *   the local activity would send again.
 * - An attempt whose answer arrived after its own start-to-close timeout is reported lost, and the
 *   workflow's next attempt would send again (to the next URL, or in the next round).
 * In both cases the same worker is asked again, and answers with what it remembers. Across a
 * worker's crash, or a retried task taken by another worker, the memory is gone and the attempt
 * may repeat: docs/reliability.md states that guarantee.
 */
export class AcceptedAttempts {
  private readonly accepted: BoundedMap<string, Accepted>;
  /** Attempts of a lane still waiting for their answer in this worker: as many as attempts in flight. */
  private readonly sending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly rememberMs = REMEMBER_MS,
    maxRemembered = MAX_REMEMBERED,
  ) {
    this.accepted = new BoundedMap(maxRemembered);
  }

  recall(lane: string, now: number): Accepted | undefined {
    const found = this.accepted.get(lane);
    if (found && now - found.at > this.rememberMs) {
      this.accepted.delete(lane);
      return undefined;
    }
    return found;
  }

  /**
   * The answer of the lane's attempt still in flight in this worker, if any: an attempt reported
   * lost may still be reading its answer when the next one starts (the worker resumed from a
   * stall), and the next one waits for it rather than race it.
   */
  inFlight(lane: string): Promise<unknown> | undefined {
    return this.sending.get(lane);
  }

  /** Marks the lane's attempt as in flight until `answer` settles. */
  sendingNow(lane: string, answer: Promise<unknown>): void {
    const settled = answer.then(
      () => undefined,
      () => undefined,
    );
    this.sending.set(lane, settled);
    void settled.then(() => {
      if (this.sending.get(lane) === settled) this.sending.delete(lane);
    });
  }

  remember(lane: string, accepted: Accepted): void {
    this.accepted.set(lane, accepted);
  }
}

/**
 * The lane key of the running attempt: its delivery run, message, destination and mapping;
 * undefined outside an activity. The message is part of it though a run delivers one message:
 * activities run outside a real workflow (the SDK's test environment) share one run id.
 */
export function attemptLane(messageId: string, destinationId: string, mapping: string | undefined): string | undefined {
  let execution: { workflowId: string; runId: string } | undefined;
  try {
    execution = Context.current().info.workflowExecution;
  } catch {
    return undefined;
  }
  if (execution === undefined) return undefined;
  return `${execution.workflowId} ${execution.runId} ${messageId} ${destinationId} ${mapping ?? ''}`;
}
