import { HEADERS_SET_BY_SWITCHYARD } from '../delivery/request';
import { compileTrigger, matchedMappings } from '../rules/mapping-triggers';
import { USER_AGENT } from '../version';
import { MASKED_VALUE, maskedHeaders } from './masked-headers';
import { renderMappingBody } from './render-mapping';
import type { ActionsMapping, OutboundAuth } from './types';

/** The preview of one mapping for one event: whether its trigger matches, and the request it would send or why it cannot render. */
export type MappingPreview =
  | { name: string; enabled: boolean; matched: boolean; request: { method: string; url: string; headers: Record<string, string>; body: unknown } }
  | { name: string; enabled: boolean; matched: boolean; error: string };

/**
 * What each mapping would send for this event, without sending it: the headers Switchyard sets and
 * the static ones, every secret (header values, signatures, Authorization) shown as the mask.
 */
export function previewMappings(mappings: ActionsMapping[], event: Record<string, unknown>, secrets: { sharedSecret: boolean; signing: boolean; auth: OutboundAuth | null }): MappingPreview[] {
  return mappings.map((mapping) => {
    const trigger = compileTrigger(mapping);
    const matched = trigger !== undefined && matchedMappings(event, [trigger]).length > 0;
    const rendered = renderMappingBody(mapping, event);
    const head = { name: mapping.name, enabled: mapping.enabled, matched };
    if (!rendered.ok) return { ...head, error: rendered.reason };
    const own = Object.fromEntries(Object.entries(maskedHeaders(mapping.settings.headers)).filter(([name]) => !HEADERS_SET_BY_SWITCHYARD.has(name.toLowerCase())).map(([name, value]) => [name.toLowerCase(), value]));
    const headers: Record<string, string> = {
      ...own,
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...(secrets.sharedSecret && { 'x-signature': MASKED_VALUE }),
      ...(secrets.signing && { 'webhook-id': MASKED_VALUE, 'webhook-timestamp': MASKED_VALUE, 'webhook-signature': MASKED_VALUE }),
      ...(secrets.auth && { authorization: MASKED_VALUE }),
    };
    return { ...head, request: { method: mapping.settings.method, url: mapping.settings.url, headers, body: JSON.parse(rendered.body) as unknown } };
  });
}
