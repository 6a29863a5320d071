import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction, type ScheduleUpdateOptions } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { ScheduledSync, SyncSchedules } from '../ports';
import { personasManualSyncWorkflowId, personasScheduleId, personasSyncWorkflowId } from '../personas/temporal-ids';
import type { ComputationRef } from '../personas/types';
import type { syncAudience, syncComputedTrait } from '../workflows';
import type { PersonasSyncInput } from '../workflows/personas-sync';
import { SOURCE } from '../workflows/search-attributes';

/** Workflow type names (the client side never loads workflow code); the exported workflow functions carry them. */
type SyncWorkflow = typeof syncAudience | typeof syncComputedTrait;
const workflowFor = (computation: ComputationRef): string => (computation.kind === 'audience' ? 'syncAudience' : 'syncComputedTrait');

const note = (sync: ScheduledSync) => `${sync.computation.kind === 'audience' ? 'Audience' : 'Computed trait'} "${sync.name}"`;

function action(sync: ScheduledSync, taskQueue: string): ScheduleOptionsAction {
  const input: PersonasSyncInput = { computation: sync.computation };
  return {
    type: 'startWorkflow',
    workflowType: workflowFor(sync.computation),
    workflowId: personasSyncWorkflowId(sync.computation),
    taskQueue,
    args: [input],
    typedSearchAttributes: [{ key: SOURCE, value: sync.sourceId }],
  };
}

/**
 * Overlap SKIP: a sync still running when the next one is due makes that one a no-op rather than a
 * second sync of the same version (which would be harmless, only wasted work). The catch-up window
 * lets a sync missed during a Temporal outage run once when it is back, not once per missed tick.
 */
const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' } as const;

export function temporalSyncSchedules(client: Client, taskQueue: string): SyncSchedules {
  return {
    async create(sync) {
      await client.schedule.create({
        scheduleId: personasScheduleId(sync.computation),
        spec: { cronExpressions: [sync.schedule] },
        action: action(sync, taskQueue),
        policies,
        typedSearchAttributes: [{ key: SOURCE, value: sync.sourceId }],
        state: { paused: sync.paused, note: note(sync), triggerImmediately: !sync.paused },
      });
    },

    async update(sync) {
      const handle = client.schedule.getHandle(personasScheduleId(sync.computation));
      await handle.update(
        (previous): ScheduleUpdateOptions => ({
          spec: { cronExpressions: [sync.schedule] },
          action: action(sync, taskQueue),
          policies,
          // Keep an operator's pause note from the Web UI when the paused state does not change.
          state: { paused: sync.paused, note: previous.state.paused === sync.paused ? previous.state.note : note(sync) },
        }),
      );
    },

    async delete(computation) {
      try {
        await client.schedule.getHandle(personasScheduleId(computation)).delete();
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    },

    async syncNow(sync) {
      const input: PersonasSyncInput = { computation: sync.computation };
      const handle = await client.workflow.start<SyncWorkflow>(workflowFor(sync.computation), {
        workflowId: personasManualSyncWorkflowId(sync.computation),
        taskQueue,
        args: [input],
        // Asking twice while a sync runs returns that sync; asking after it finished starts a new one.
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        typedSearchAttributes: [{ key: SOURCE, value: sync.sourceId }],
      });
      return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
    },
  };
}
