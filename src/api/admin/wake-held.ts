import type { FastifyBaseLogger } from 'fastify';
import type { Deliveries, WakeReason } from '../../ports';

const WOKEN_BY: Record<WakeReason, string> = { resumed: 'destination resumed', 'flow-changed': 'flow control changed' };

/**
 * Held deliveries of a destination ask again now, oldest first, rather than at the end of their
 * wait (which stays the fallback): on resume, on a new rate limit or a cleared
 * backpressure. Not awaited: the operator's answer does not wait for every signal.
 */
export function wakeHeldDeliveries(deliveries: Pick<Deliveries, 'wakeHeld'>, destinationId: string, why: WakeReason, log: FastifyBaseLogger): void {
  void deliveries.wakeHeld(destinationId, why).then(
    (woken) => log.info({ destinationId, woken }, `${WOKEN_BY[why]}; held deliveries woken`),
    (err: Error) => log.warn({ destinationId, err: err.message }, 'waking held deliveries failed; they ask again at the end of their wait'),
  );
}
