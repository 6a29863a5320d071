import type { ComputationRef } from './types';

/**
 * Names Personas things get in Temporal, so an operator finds them on the Web UI's Schedules and
 * Workflows pages by the audience or computed trait id (`aud_…`, `ctr_…`).
 */
export const personasScheduleId = (ref: ComputationRef) => `personas-sync:${ref.id}`;

/** Workflows a schedule starts are named `<this>-<time>` by Temporal; a sync started by the API is `<this>:now`. */
export const personasSyncWorkflowId = (ref: ComputationRef) => `personas-sync:${ref.id}`;
export const personasManualSyncWorkflowId = (ref: ComputationRef) => `${personasSyncWorkflowId(ref)}:now`;
