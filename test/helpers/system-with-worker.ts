import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../src/config';
import { spawnWorker, stopProcess, waitForPoller } from './processes';
import type { Receiver } from './receiver';
import { startSystem, type TestSystem } from './system';

/**
 * A test file's own API (in process) and worker process on a task queue of its own, so the file
 * may configure, stop or kill its worker without touching any other test.
 */
export async function startSystemWithWorker(queue: string, options: { overrides?: Partial<Config>; workerEnv?: Record<string, string>; logName: string }): Promise<{ system: TestSystem; worker: ChildProcess }> {
  const system = await startSystem({ temporalTaskQueue: queue, ...options.overrides });
  const worker = spawnWorker({ TEMPORAL_TASK_QUEUE: queue, ...options.workerEnv }, path.join(process.env.SWITCHYARD_TEST_DIR ?? '.', options.logName));
  await waitForPoller(system.config.temporalAddress, system.config.temporalNamespace, queue, worker);
  return { system, worker };
}

/** Stops what startSystemWithWorker started, and the file's receivers. */
export async function closeSystemWithWorker(system: TestSystem | undefined, worker: ChildProcess | undefined, receivers: Receiver[]): Promise<void> {
  await stopProcess(worker);
  await Promise.all(receivers.map((r) => r.close()));
  await system?.close();
}
