import type { Replay } from '../../src/delivery/replay';
import { waitFor } from './processes';
import { ADMIN_TOKEN, type TestSystem } from './system';

/** Replays through the admin API, as an operator makes and watches them. */
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** `POST /admin/replays`: 202 and running, its id. */
export async function startReplay(system: TestSystem, payload: Record<string, unknown>): Promise<string> {
  const response = await system.app.inject({ method: 'POST', url: '/admin/replays', headers: auth, payload });
  expect(response.statusCode).toBe(202);
  const body = response.json<{ id: string; status: string }>();
  expect(body.status).toBe('running');
  return body.id;
}

export const readReplay = async (system: TestSystem, id: string) => (await system.app.inject({ method: 'GET', url: `/admin/replays/${id}`, headers: auth })).json<Replay>();

/** The replay once it has ended (completed, cancelled or failed). */
export function replayFinished(system: TestSystem, id: string, timeoutMs = 90_000): Promise<Replay> {
  return waitFor(async () => {
    const replay = await readReplay(system, id);
    if (replay.status === 'running' || replay.status === 'paused') throw new Error(`replay ${replay.status}: ${JSON.stringify(replay)}`);
    return replay;
  }, timeoutMs);
}
