import { inParallel } from '../src/in-parallel';
import { ProcessMeter } from './proc';
import { round } from './stats';
import type { BenchStack } from './system';

/** What deleting the run's closed workflows cost, per workflow (`--retention`). */
export interface RetentionCost {
  workflows: number;
  /** From the first delete to the last workflow gone from visibility. */
  seconds: number;
  cpuSeconds: Record<string, number>;
  /** CPU ms per deleted workflow of the server, its PostgreSQL (or nothing, on the dev server) and both. */
  cpuMsPerWorkflow: { temporal: number; postgres: number | null; server: number };
}

/**
 * Deletes every closed workflow on the given task queues through DeleteWorkflowExecution, as
 * retention does when a closed run's time is up (Temporal then deletes the visibility record, the
 * mutable state and the history), and meters the server and its PostgreSQL from the first delete
 * until visibility shows none left. A released server does not take a namespace retention under an
 * hour, which no bench run lasts, so retention's steady-state cost is measured this way instead.
 */
export async function deleteClosedWorkflows(stack: BenchStack, taskQueues: string[], concurrency: number, progress: (line: string, final?: boolean) => void, deadlineMs = 15 * 60_000): Promise<RetentionCost> {
  const query = `(${taskQueues.map((q) => `TaskQueue = "${q}"`).join(' OR ')}) AND ExecutionStatus != "Running"`;
  // Listed before the meter starts: listing is not what retention does.
  const executions: { workflowId: string; runId: string }[] = [];
  for await (const workflow of stack.client.workflow.list({ query })) executions.push({ workflowId: workflow.workflowId, runId: workflow.runId });
  progress(`retention: deleting ${executions.length} closed workflows (DeleteWorkflowExecution, ${concurrency} at a time)`, true);
  const meter = new ProcessMeter(stack.pids, stack.processTrees);
  const started = Date.now();
  meter.start();
  let deleted = 0;
  await inParallel(executions, concurrency, async (workflowExecution) => {
    await stack.client.workflowService.deleteWorkflowExecution({ namespace: stack.client.options.namespace, workflowExecution });
    if (++deleted % 1000 === 0) progress(`  retention: ${deleted}/${executions.length} deletes accepted`);
  });
  // The deletes are accepted at once and carried out by the server's task queues: wait for them.
  let left = executions.length;
  while (left > 0) {
    if (Date.now() - started > deadlineMs) throw new Error(`retention: ${left} of ${executions.length} workflows still in visibility after ${deadlineMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    left = (await stack.client.workflow.count(query)).count;
    progress(`  retention: ${executions.length - left}/${executions.length} gone from visibility`);
  }
  const cost = meter.stop();
  const perWorkflow = (seconds: number | undefined) => (seconds === undefined ? null : round((seconds * 1000) / Math.max(1, executions.length), 2));
  const temporal = perWorkflow(cost.cpuSeconds.temporal) ?? 0;
  const postgres = perWorkflow(cost.cpuSeconds.postgres);
  return {
    workflows: executions.length,
    seconds: round((Date.now() - started) / 1000, 1),
    cpuSeconds: Object.fromEntries(Object.entries(cost.cpuSeconds).map(([role, seconds]) => [role, round(seconds, 2)])),
    cpuMsPerWorkflow: { temporal, postgres, server: round(temporal + (postgres ?? 0), 2) },
  };
}

export function retentionLine(cost: RetentionCost): string {
  const pg = cost.cpuMsPerWorkflow.postgres === null ? '' : `, PostgreSQL ${cost.cpuMsPerWorkflow.postgres}`;
  return `Retention's cost (every closed workflow of the run deleted as retention deletes it): ${cost.workflows} workflows in ${cost.seconds} s; CPU ms per workflow: Temporal ${cost.cpuMsPerWorkflow.temporal}${pg}, together ${cost.cpuMsPerWorkflow.server}`;
}
