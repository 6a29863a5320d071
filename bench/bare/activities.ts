import { performance } from 'node:perf_hooks';

/** When each no-op ran: the bare reference's "receipt", reported to the bench like the receiver's. */
export const ran: [string, number][] = [];

export const bareActivities = {
  async noop(messageId: string): Promise<void> {
    ran.push([messageId, performance.timeOrigin + performance.now()]);
  },
};

export type BareActivities = typeof bareActivities;
