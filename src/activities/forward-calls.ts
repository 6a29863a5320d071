import { ApplicationFailure, log } from '@temporalio/activity';
import { ingestCalls, type IngestDependencies } from '../messages/ingest-calls';
import { openedCalls, type ForwardingJob } from '../messages/forwarding-job';
import type { Store } from '../store/types';

/**
 * A forwarding job's one activity: the page opened (a call whose user was erased since is left
 * out) and ingested into the target source as if sent there, never forwarded again. A target that
 * cannot take it now (its store or its workflow starts) throws, and the job retries; a target
 * deleted since, or calls it refuses, end the job with a warning, as a sender's refused request would.
 */
export function makeForwardingActivities(store: Pick<Store, 'sources' | 'dataKeys'>, ingest: (() => IngestDependencies) | undefined) {
  return {
    async forwardCalls(job: ForwardingJob): Promise<void> {
      if (!ingest) throw ApplicationFailure.nonRetryable('this worker ingests no forwarded calls', 'ForwardingUnavailable');
      if (!(await store.sources.get(job.targetSourceId))) {
        log.warn('a tracking plan forwards into a source that no longer exists; nothing forwarded', { sourceId: job.targetSourceId });
        return;
      }
      const { calls, erased } = await openedCalls(job.calls, store.dataKeys);
      if (erased > 0) log.info('forwarded calls of erased users were left out', { sourceId: job.targetSourceId, erased });
      if (calls.length === 0) return;
      const result = await ingestCalls(ingest(), { sourceId: job.targetSourceId, calls, receivedAtMs: Date.now(), inBatch: true, forwarded: true });
      if (result.status === 'unavailable') throw new Error(`the target source could not take the forwarded calls: ${result.reason}`);
      if (result.status === 'rejected') log.warn('forwarded calls were refused', { sourceId: job.targetSourceId, problem: result.problem });
    },
  };
}
