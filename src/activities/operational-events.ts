import { createHash } from 'node:crypto';
import { ApplicationFailure, log } from '@temporalio/activity';
import type { Agent } from 'undici';
import { operationalBody, type OperationalEvent } from '../delivery/operational-events';
import { standardWebhookHeaders } from '../delivery/standard-webhooks';
import type { OperationalEvents } from '../ports';
import type { Store } from '../store/types';
import { postWebhook } from './post-webhook';

/** `webhook-id`: stable per incident (the operational workflow's id), so a receiver deduplicates retries. */
export const operationalEventId = (incident: string): string => `op_${createHash('sha256').update(incident, 'utf8').digest('base64url').slice(0, 32)}`;

/**
 * The activities of operational events. `raiseOperationalEvent` is what a delivery
 * workflow calls (its own retries make a raise durable); `sendOperationalEvent` runs on the
 * operational lane: one signed POST through the egress-guarded agent (the same SSRF guard as
 * webhooks), thrown as retryable when the endpoint should be asked again.
 */
export function makeOperationalActivities(store: Pick<Store, 'operationalEndpoints'>, agent: Agent, timeoutMs: number, events: OperationalEvents | undefined) {
  return {
    async raiseOperationalEvent(event: OperationalEvent, scope: { run?: string; since?: string }): Promise<void> {
      await events?.raise(event, scope);
    },

    async sendOperationalEvent({ endpointId, event, eventId }: { endpointId: string; event: OperationalEvent; eventId: string }): Promise<'sent' | 'skipped'> {
      const endpoint = await store.operationalEndpoints.get(endpointId);
      if (!endpoint || !endpoint.enabled) return 'skipped';
      const secret = await store.operationalEndpoints.secretOf(endpointId);
      const body = operationalBody(event, endpoint.format);
      const headers = { 'content-type': 'application/json', ...standardWebhookHeaders(secret ? [secret] : [], operationalEventId(eventId), Math.floor(Date.now() / 1000), body) };
      const outcome = await postWebhook(agent, endpoint.url, headers, body, timeoutMs);
      if (outcome.kind === 'success') return 'sent';
      log.warn(`operational event not accepted: ${outcome.reason}`, { endpointId, type: event.type });
      if (outcome.kind === 'permanent') throw ApplicationFailure.nonRetryable(outcome.reason, 'OperationalEndpointRefused');
      throw ApplicationFailure.retryable(outcome.reason, 'OperationalEndpointFailed');
    },
  };
}

/**
 * A 410 (or an operator's directive) has just switched a URL off: `endpoint.disabled`, once per
 * incident (the switch's time names it, so every worker that saw a 410 raises the same one).
 * Prometheus' switchyard_webhook_disabled is the floor when Temporal cannot take the event.
 */
export function webhookSwitchedOff(store: Pick<Store, 'webhookSwitches'>, events: OperationalEvents) {
  return async (at: { sourceId: string; destinationId: string; webhookIndex: number; url: string; status: number; reason: string }): Promise<void> => {
    try {
      const since = await store.webhookSwitches.disabledAt(at.destinationId, at.url);
      const event: OperationalEvent = {
        type: 'endpoint.disabled',
        timestamp: since ?? new Date().toISOString(),
        data: { sourceId: at.sourceId, destinationId: at.destinationId, webhookIndex: at.webhookIndex, lastAttempt: { responseStatusCode: at.status, error: at.reason, timestamp: new Date().toISOString() } },
      };
      await events.raise(event, { since });
    } catch (err) {
      log.warn(`endpoint.disabled not raised: ${(err as Error).message}`, { destinationId: at.destinationId, webhookIndex: at.webhookIndex });
    }
  };
}
