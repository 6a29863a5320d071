import { log } from '@temporalio/activity';
import type { Agent } from 'undici';
import { webhookRequestHeaders } from '../delivery/request';
import { activeSigningSecrets, standardWebhookId } from '../delivery/standard-webhooks';
import type { AttemptRequest, AttemptResult } from '../delivery/types';
import type { Store } from '../store/types';
import { postWebhook } from './post-webhook';

/**
 * Reads the destination at send time — so a new secret, new headers or switching the destination
 * off take effect on the next attempt — and keeps secrets and header values out of workflow history.
 */
export function makeAttemptWebhook(store: Store, agent: Agent) {
  return async function attemptWebhook(req: AttemptRequest): Promise<AttemptResult> {
    const destination = await store.destinations.get(req.destinationId);
    if (!destination || !destination.enabled) return { destinationEnabled: false, webhookCount: 0 };
    const webhookCount = destination.webhooks.length;
    const webhook = destination.webhooks[req.webhookIndex];
    if (!webhook) return { destinationEnabled: true, webhookCount };
    const fields = { destinationId: req.destinationId, webhookIndex: req.webhookIndex, round: req.round, messageId: req.messageId };
    if (webhook.disabled) {
      return { destinationEnabled: true, webhookCount, outcome: { kind: 'permanent', reason: `webhook switched off (${webhook.disabled.at}): ${webhook.disabled.reason}` } };
    }

    const body = JSON.stringify(req.message);
    const started = Date.now();
    const headers = webhookRequestHeaders(webhook.headers, destination.sharedSecret, body, {
      secrets: activeSigningSecrets(destination.signing, started),
      id: standardWebhookId(req.messageId),
      timestampSeconds: Math.floor(started / 1000),
    });
    const outcome = await postWebhook(agent, webhook.url, headers, body, req.timeoutMs);
    const durationMs = Date.now() - started;
    const logged = { ...fields, durationMs, status: 'status' in outcome ? outcome.status : undefined };
    if (outcome.kind === 'success') log.debug('webhook accepted', logged);
    else log.warn(`webhook attempt failed: ${outcome.reason}`, { ...logged, outcome: outcome.kind });
    if (outcome.kind === 'permanent' && outcome.disablesWebhook) {
      const reason = `answered HTTP ${outcome.status} Gone to message ${req.messageId}`;
      if (await store.destinations.disableWebhook(req.destinationId, webhook.url, reason)) log.warn('webhook URL switched off', { ...fields, reason });
    }
    return { destinationEnabled: true, webhookCount, outcome, durationMs };
  };
}
