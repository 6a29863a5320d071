import type { ChildProcess } from 'node:child_process';
import { stopProcess } from './processes';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as unknown as Record<string, ChildProcess | undefined>;
  await stopProcess(g.__SWITCHYARD_WORKER__);
  await stopProcess(g.__SWITCHYARD_TEMPORAL__);
}
