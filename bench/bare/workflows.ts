import { proxyActivities } from '@temporalio/workflow';
import type { BareActivities } from './activities';

const { noop } = proxyActivities<BareActivities>({ startToCloseTimeout: '10s' });

/** Temporal's own benchmark shape: one workflow per message, one activity that does nothing. */
export async function benchNoop(messageId: string): Promise<void> {
  await noop(messageId);
}
