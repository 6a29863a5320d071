import type { MessageBody } from '../delivery/types';
import { renderMappingBody } from '../mappings/render-mapping';
import type { MappingMethod } from '../mappings/types';
import type { Destination, DestinationWebhook } from '../store/types';

/** What one attempt sends: the body as sent (signed as it is) and the method; or why a mapping could not render it. */
export interface RenderedRequest {
  method: MappingMethod;
  body: string;
}
export type RequestTarget = RenderedRequest | { renderFailure: string };

/** The URL an attempt goes to and what it sends; `count` alone: nothing at this index (the round ends there). */
export type FoundTarget = { webhookCount: number; webhook: DestinationWebhook; target: RequestTarget } | { count: number };

/** The seed's request: the whole event, POSTed to the webhook at this index. */
export function webhookTarget(destination: Destination, req: { webhookIndex: number; message: MessageBody }): FoundTarget {
  const webhook = destination.webhooks[req.webhookIndex];
  if (!webhook) return { count: destination.webhooks.length };
  return { webhookCount: destination.webhooks.length, webhook, target: { method: 'POST', body: JSON.stringify(req.message) } };
}

/**
 * A mapping's request, read at send time like a webhook's settings (a new URL, header or
 * data applies from the next attempt). A mapping removed, renamed or switched off since the message
 * was accepted has no request (count 0: the workflow stops that lane). Its URL is asked about
 * backpressure every time: the store's per-URL join covers the webhooks list only.
 */
export function mappedTarget(destination: Destination, name: string, index: number, message: MessageBody): FoundTarget {
  const mapping = destination.type === 'actions' ? destination.mappings.find((m) => m.name === name && m.enabled) : undefined;
  if (!mapping) return { count: 0 };
  if (index > 0) return { count: 1 };
  const webhook: DestinationWebhook = { url: mapping.settings.url, headers: mapping.settings.headers, backpressure: { untilMs: Number.MAX_SAFE_INTEGER, reason: 'ask the store' } };
  const rendered = renderMappingBody(mapping, message);
  return { webhookCount: 1, webhook, target: rendered.ok ? { method: mapping.settings.method, body: rendered.body } : { renderFailure: rendered.reason } };
}
