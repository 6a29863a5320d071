/**
 * How late a timer may fire before the worker counts itself stalled: a busy event loop runs timers
 * a little late all the time; a stall (a long GC pause, a starved loop, a process paused) runs them
 * seconds late.
 */
export const STALL_TOLERANCE_MS = 250;
/** After a stall, how long the answer that may have arrived meanwhile gets to be read before the attempt times out. */
export const READ_AFTER_STALL_MS = 500;

/**
 * What an attempt's timer does when it fires `lateMs` after it was due. On time (or nearly): the
 * receiver did not answer within the timeout. Seconds late: this process was not running, and an
 * answer that arrived in time may be waiting unread in the socket, behind the timer in the event
 * loop; it gets one short read before the attempt counts as timed out, so a stall of the sender
 * alone never makes an answered attempt a retry (a second request to a receiver that already has
 * the message).
 */
export function onTimerFired(lateMs: number, readAlready: boolean): 'time-out' | 'read-first' {
  return lateMs > STALL_TOLERANCE_MS && !readAlready ? 'read-first' : 'time-out';
}

/** An abort signal that times out like `AbortSignal.timeout(timeoutMs)`, except after a stall (onTimerFired). */
export function stallAwareTimeout(timeoutMs: number, now: () => number = () => performance.now()): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  let due = now() + timeoutMs;
  let readAlready = false;
  const fire = () => {
    if (onTimerFired(now() - due, readAlready) === 'read-first') {
      readAlready = true;
      due = now() + READ_AFTER_STALL_MS;
      timer = setTimeout(fire, READ_AFTER_STALL_MS);
      return;
    }
    controller.abort(new DOMException(`no response within ${timeoutMs}ms`, 'TimeoutError'));
  };
  let timer = setTimeout(fire, timeoutMs);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
