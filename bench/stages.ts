import { percentiles, round, type Percentiles } from './stats';

/**
 * Where a single call's time goes, from one message's own clocks (all on this machine): the
 * sender's send and acknowledgement, Temporal's history event times, and the receipt.
 */
export interface CallTimes {
  sentAt: number;
  ackAt: number;
  /** WorkflowExecutionStarted: the start is durable in Temporal. */
  startedAt: number;
  /** The first WorkflowTaskStarted: a worker has the workflow's first task (eager: in the start reply). */
  firstTaskAt: number;
  receiptAt: number;
}

export const STAGES = {
  requestToStart: 'call sent → start durable (HTTP, the API\'s checks and store writes, the start RPC)',
  startToAck: 'start durable → 200 back at the sender (start reply, the API\'s answer)',
  startToTask: 'start durable → first workflow task started (eager: handed back in the start reply)',
  taskToReceipt: 'first task started → webhook received (workflow code, local activity: settings read, signing, POST)',
  endToEnd: 'call sent → webhook received',
} as const;
export type Stage = keyof typeof STAGES;

export function stageDurations(t: CallTimes): Record<Stage, number> {
  return {
    requestToStart: t.startedAt - t.sentAt,
    startToAck: t.ackAt - t.startedAt,
    startToTask: t.firstTaskAt - t.startedAt,
    taskToReceipt: t.receiptAt - t.firstTaskAt,
    endToEnd: t.receiptAt - t.sentAt,
  };
}

/** Percentiles of each stage over the sample, in ms. */
export function stagePercentiles(sample: CallTimes[]): Record<Stage, Percentiles> {
  const durations = sample.map(stageDurations);
  return Object.fromEntries(
    (Object.keys(STAGES) as Stage[]).map((stage) => {
      const p = percentiles(durations.map((d) => d[stage]));
      return [stage, { p50: round(p.p50, 1), p95: round(p.p95, 1), p99: round(p.p99, 1), max: round(p.max, 1) }];
    }),
  ) as Record<Stage, Percentiles>;
}
