import { performance } from 'node:perf_hooks';

/** When each design-floor workflow's no-op local activity ran, reported to the bench like the receiver's receipts. */
export const ran: [string, number][] = [];

export const designFloorActivities = {
  async seen(messageId: string): Promise<void> {
    ran.push([messageId, performance.timeOrigin + performance.now()]);
  },
};

export type DesignFloorActivities = typeof designFloorActivities;
