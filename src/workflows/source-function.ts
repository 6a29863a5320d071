import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { retryDelayMs } from '../functions/source-retry';
import type { SourceFunctionRequest } from '../messages/source-function-request';

/**
 * Store and Temporal troubles (a worker restart, the store away, ingestion's workflow starts
 * refused) are retried by Temporal for a day, apart from the function's own retries: only what
 * the function did counts against Segment's six.
 */
const { runSourceFunction } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5m' },
  scheduleToCloseTimeout: '1d',
});

/**
 * One request to a source function's webhook: its `onRequest` run in the sandbox on a worker
 * (activities/source-function.ts) and what it emitted ingested as the source's own calls. A
 * RetryError or a timeout is tried again on Segment's schedule (functions/source-retry.ts) with the
 * version the first run used; the last retry, or any other error, fails the request, which the
 * activity records with its error for the source's list of failed requests.
 */
export async function runSourceFunctionRequest(request: SourceFunctionRequest): Promise<{ outcome: string; attempts: number }> {
  let version: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const final = attempt >= request.retry.retries;
    const result = await runSourceFunction(request, { attempt, final, ...(version !== undefined && { version }) });
    version = result.version ?? version;
    if (result.kind !== 'retry' || final) return { outcome: result.reason, attempts: attempt + 1 };
    await sleep(retryDelayMs(request.retry, attempt, Math.random()));
  }
}
