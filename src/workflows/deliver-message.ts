import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  upsertSearchAttributes,
  log,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { canRetryAt, nextBackoff } from '../delivery/backoff';
import type { AttemptOutcome, AttemptResult, DeliveryInput, DeliveryReport, DestinationReport } from '../delivery/types';
import { STATUS, type DeliveryStatus } from './search-attributes';

/** Time Temporal gives one attempt beyond the webhook's own deadline, to notice a lost worker. */
const ACTIVITY_GRACE_MS = 5_000;

/**
 * One message, every enabled destination of its source, in parallel. Per destination: its webhook
 * URLs in configured order, one signed POST each, stopping at the first success (seed rule 1). A
 * round with no success waits (backoff with jitter, Retry-After honoured) and starts again until the
 * retry window, counted from the first attempt, runs out.
 */
export async function deliverMessage(input: DeliveryInput): Promise<DeliveryReport> {
  const { policy } = input;
  const attemptOptions = {
    startToCloseTimeout: policy.timeoutMs + ACTIVITY_GRACE_MS,
    // HTTP outcomes come back as values and the loop below owns the retry schedule; Temporal only
    // retries an attempt lost with its worker, and that too is just a retryable outcome here.
    retry: { maximumAttempts: 1 },
  };
  const { attemptWebhook } = proxyActivities<Activities>(attemptOptions);
  // The common case, the first URL accepting the first try, runs as a local activity inside this
  // workflow task: no activity task through the server and no second workflow task, about half
  // the server's writes per message (docs/performance.md). Its result is recorded in history as a
  // marker (a plain AttemptResult, no secrets, like an activity result). Every later attempt is a
  // regular activity, each visible on its own in history.
  const { attemptWebhook: attemptWebhookLocally } = proxyLocalActivities<Activities>(attemptOptions);
  const deadline = Date.now() + policy.retryWindowMs;

  const setStatus = (status: DeliveryStatus) => upsertSearchAttributes([{ key: STATUS, value: status }]);

  async function attempt(destinationId: string, webhookIndex: number, round: number, knownCount: number): Promise<AttemptResult> {
    const firstAttempt = round === 1 && webhookIndex === 0;
    const request = { destinationId, webhookIndex, round, messageId: input.messageId, message: input.message, timeoutMs: policy.timeoutMs };
    try {
      if (firstAttempt && policy.firstAttemptLocal) {
        const local = await attemptWebhookLocally(request);
        if (!local.deferred) return local;
      }
      return await attemptWebhook(request);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const outcome: AttemptOutcome = { kind: 'retry', reason: `attempt lost: ${err.cause?.message ?? err.message}` };
      // The lost attempt could not say how many URLs there are now; keep the last known count.
      return { destinationEnabled: true, webhookCount: knownCount, outcome };
    }
  }

  async function deliverTo(destinationId: string): Promise<DestinationReport> {
    const givenUp = new Set<number>();
    // Learned from the first attempt's answer; the store may change it between rounds.
    let webhookCount = 1;
    for (let round = 1; ; round++) {
      let retryAfterMs: number | undefined;
      const reasons: string[] = [];
      for (let index = 0; index < webhookCount; index++) {
        if (givenUp.has(index)) continue;
        const result = await attempt(destinationId, index, round, webhookCount);
        if (!result.destinationEnabled) return { destinationId, status: 'stopped', rounds: round, reason: 'destination switched off or deleted' };
        webhookCount = result.webhookCount;
        const outcome = result.outcome;
        if (!outcome) break;
        if (outcome.kind === 'success') return { destinationId, status: 'delivered', webhookIndex: index, rounds: round };
        reasons.push(`webhook ${index}: ${outcome.reason}`);
        if (outcome.kind === 'permanent') givenUp.add(index);
        if (outcome.kind === 'retry' && outcome.retryAfterMs !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, outcome.retryAfterMs);
      }
      if (webhookCount === 0) return { destinationId, status: 'stopped', rounds: round, reason: 'destination has no webhook URLs' };
      const reason = reasons.join('; ');
      if (givenUp.size >= webhookCount) return { destinationId, status: 'failed', rounds: round, reason: `every webhook failed permanently: ${reason}` };
      const delay = nextBackoff(round, policy, Math.random(), retryAfterMs);
      if (!canRetryAt(Date.now(), delay, deadline)) return { destinationId, status: 'failed', rounds: round, reason: `retry window exhausted: ${reason}` };
      log.info('round failed; retrying', { destinationId, round, delayMs: delay, reason });
      setStatus('retrying');
      await sleep(delay);
    }
  }

  const destinations = await Promise.all(input.destinationIds.map(deliverTo));
  const report: DeliveryReport = { messageId: input.messageId, destinations };
  const failed = destinations.filter((d) => d.status === 'failed');
  if (failed.length > 0) {
    setStatus('failed');
    throw ApplicationFailure.nonRetryable(
      failed.map((d) => `${d.destinationId}: ${d.reason}`).join(' | '),
      'DeliveryFailed',
      report,
    );
  }
  setStatus(destinations.every((d) => d.status === 'delivered') ? 'delivered' : 'stopped');
  return report;
}
