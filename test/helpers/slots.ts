import path from 'node:path';

/**
 * Integration files run side by side, one Jest worker per slot. Each slot has its own
 * store file, data dir and task queue, served by its own worker process, so files in different
 * slots share only the Temporal dev server (workflow ids carry each file's own source ids) and
 * PostgreSQL (each file creates its own database). Files within one slot run one after another,
 * as the whole run did in band.
 */
export interface SlotEnv {
  DATABASE_PATH: string;
  DATA_DIR: string;
  SWITCHYARD_TEST_DIR: string;
  TEMPORAL_TASK_QUEUE: string;
}

/** The environment of slot `slot` (1-based, Jest's JEST_WORKER_ID) of the run in `runDir`. */
export function slotEnv(runDir: string, slot: number): SlotEnv {
  const dir = path.join(runDir, `slot-${slot}`);
  return {
    DATABASE_PATH: path.join(dir, 'switchyard.db'),
    DATA_DIR: dir,
    SWITCHYARD_TEST_DIR: dir,
    TEMPORAL_TASK_QUEUE: `switchyard-test-${slot}`,
  };
}

/** Where globalSetup hands the slots to the Jest workers (their environment is the parent's, copied after globalSetup). */
export const SLOTS_ENV = 'SWITCHYARD_TEST_SLOTS';

/** The slot a test file runs in: Jest numbers its workers from 1 (1 as well in band). */
export function currentSlot(env: NodeJS.ProcessEnv = process.env): number {
  const slot = Number(env.JEST_WORKER_ID ?? '1');
  return Number.isInteger(slot) && slot >= 1 ? slot : 1;
}
