import { currentSlot, slotEnv } from '../helpers/slots';

/** Integration files in different Jest workers share nothing a test reads back. */
describe('test slots', () => {
  it('give each Jest worker its own store, data dir and task queue', () => {
    const slots = [1, 2, 3, 4].map((slot) => slotEnv('/run', slot));
    for (const key of ['DATABASE_PATH', 'DATA_DIR', 'SWITCHYARD_TEST_DIR', 'TEMPORAL_TASK_QUEUE'] as const) {
      expect(new Set(slots.map((slot) => slot[key])).size).toBe(slots.length);
    }
    // The store lives in the slot's own dir, where its processes' logs go too.
    for (const slot of slots) expect(slot.DATABASE_PATH.startsWith(`${slot.DATA_DIR}/`)).toBe(true);
  });

  it.each([
    [{ JEST_WORKER_ID: '2' }, 2],
    [{}, 1],
    [{ JEST_WORKER_ID: '0' }, 1],
    [{ JEST_WORKER_ID: 'x' }, 1],
  ])('reads the slot from JEST_WORKER_ID (%j → %i)', (env, slot) => {
    expect(currentSlot(env)).toBe(slot);
  });
});
