import { createWebhookAgent } from '../activities/post-webhook';
import type { Config } from '../config';
import { parseAllowlist } from '../delivery/egress';
import { MAX_BATCH_BYTES } from '../messages/call-rules';
import { functionFetch } from './function-fetch';
import { SandboxPool } from './sandbox-pool';

/**
 * The sandbox a process runs functions in, from its configuration: FUNCTION_THREADS threads,
 * FUNCTION_TIMEOUT and FUNCTION_MEMORY_LIMIT per invocation, `fetch` through the egress guard
 * (EGRESS_ALLOWLIST), and a handler's answer bounded by the largest body Switchyard accepts.
 * Threads start on the first invocation, so a process that runs no function pays nothing.
 */
export function createFunctionSandbox(config: Pick<Config, 'functionThreads' | 'functionTimeout' | 'functionMemoryLimit' | 'egressAllowlist'>): SandboxPool {
  const agent = createWebhookAgent(parseAllowlist(config.egressAllowlist), config.functionTimeout);
  const pool = new SandboxPool({
    threads: config.functionThreads,
    timeoutMs: config.functionTimeout,
    memoryBytes: config.functionMemoryLimit * 1024 * 1024,
    outputLimit: MAX_BATCH_BYTES,
    fetch: functionFetch(agent),
  });
  const close = pool.close.bind(pool);
  pool.close = async () => {
    await close();
    await agent.close();
  };
  return pool;
}
