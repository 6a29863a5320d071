import { currentSlot, SLOTS_ENV, type SlotEnv } from './slots';

// Runs before each integration file (jest.config.js setupFiles): the file's process.env becomes its
// slot's (test/helpers/slots.ts), so its API, store and any process it spawns use the slot's store,
// data dir and task queue, served by the slot's worker.
const slots = JSON.parse(process.env[SLOTS_ENV] ?? '{}') as Record<string, SlotEnv>;
const env = slots[String(currentSlot())];
if (env === undefined) throw new Error(`no test slot ${currentSlot()} in ${SLOTS_ENV}: the integration project's globalSetup starts one per Jest worker`);
Object.assign(process.env, env);
