import type { ChildProcess } from 'node:child_process';
import type { PostgresServer } from './postgres';
import { COMPILED_SOURCE_ENV, removeCompiledSource } from './compiled-source';
import { stopProcess } from './processes';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as unknown as { __SWITCHYARD_WORKERS__?: ChildProcess[]; __SWITCHYARD_TEMPORAL__?: ChildProcess };
  await Promise.all((g.__SWITCHYARD_WORKERS__ ?? []).map((worker) => stopProcess(worker)));
  await stopProcess(g.__SWITCHYARD_TEMPORAL__);
  await (globalThis as unknown as { __SWITCHYARD_POSTGRES__?: PostgresServer }).__SWITCHYARD_POSTGRES__?.stop();
  removeCompiledSource(process.env[COMPILED_SOURCE_ENV]);
}
