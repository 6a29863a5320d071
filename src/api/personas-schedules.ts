import type { ComputationRef } from '../personas/types';

/** An audience or computed trait as its Temporal Schedule needs to know it. */
export interface ScheduledSync {
  computation: ComputationRef;
  sourceId: string;
  name: string;
  /** Cron expression, UTC. */
  schedule: string;
  paused: boolean;
}

/**
 * What the admin API needs from Temporal for Personas (a sibling of Deliveries): one Temporal
 * Schedule per definition, created, updated, paused and deleted with it, and a sync on demand.
 */
export interface SyncSchedules {
  /** Creates the schedule; unless paused, its first sync starts at once (seed: "When an audience is created..."). */
  create(sync: ScheduledSync): Promise<void>;
  /** Sets the cron expression and the paused state. */
  update(sync: ScheduledSync): Promise<void>;
  /** Deletes the schedule; a schedule already gone is not an error. */
  delete(computation: ComputationRef): Promise<void>;
  /** Starts a sync now (or finds the one the API started and is still running); the workflow to follow. */
  syncNow(sync: ScheduledSync): Promise<{ workflowId: string; runId: string }>;
}
