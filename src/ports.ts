import type { DeliveryInput } from './delivery/types';
import type { ComputationRef } from './personas/types';

/**
 * What the API and the message path need from Temporal, as interfaces: src/temporal/ implements
 * them, tests may pass their own. Kept apart from both so neither side imports the other.
 */

/** Durable starts of delivery workflows, and readiness. */
export interface Deliveries {
  /**
   * Resolves only when Temporal has accepted (or already has) a workflow for every input. Past
   * `deadline` (epoch ms) no call is retried and no new start begins.
   */
  start(inputs: DeliveryInput[], deadline?: number): Promise<void>;
  /** Resolves once no Temporal call is under way; the app's close awaits it before the connection closes. */
  drain(): Promise<void>;
  health(): Promise<{ temporal: boolean; worker: boolean }>;
  /** Deletes the closed delivery workflows of these users (their events live in workflow history). Returns how many. */
  forgetUsers(userIds: string[]): Promise<number>;
}

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
 * Personas syncs on a schedule: one Temporal Schedule per definition, created, updated, paused and
 * deleted with it, and a sync on demand.
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

/** Starts one delivery workflow on a task queue; false when Temporal already has it (same messageId). */
export type StartDelivery = (input: DeliveryInput, taskQueue: string) => Promise<boolean>;
