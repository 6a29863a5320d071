import type { RuleViolation } from '../delivery/webhook-rules';
import type { ActionsMapping } from './types';

/**
 * What the admin API and the preview show in place of a mapping's header value (write-only, like a
 * webhook's): the mapping keeps Segment's shape, so a GET pasted back as a PATCH is a valid body,
 * and a value sent back as this mask keeps the value saved (`unmaskedMappings`).
 */
export const MASKED_VALUE = '********';

export function maskedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, MASKED_VALUE]));
}

/** Mappings as the API shows them: header values masked. */
export function maskedMappings(mappings: ActionsMapping[]): ActionsMapping[] {
  return mappings.map((mapping) => ({ ...mapping, settings: { ...mapping.settings, headers: maskedHeaders(mapping.settings.headers) } }));
}

/**
 * A PATCH's mappings with every masked header value replaced by the value saved for the same
 * mapping name, header name and URL (a secret stays with the URL it was set for). A mask
 * with no such saved value (a renamed or new mapping, a new header, a changed URL) is refused,
 * naming the field: sent as written, the receiver would get `********` as its key.
 */
export function unmaskedMappings(given: ActionsMapping[], saved: ActionsMapping[]): { mappings: ActionsMapping[] } | { violation: RuleViolation } {
  const savedByName = new Map(saved.map((mapping) => [mapping.name, mapping]));
  const mappings: ActionsMapping[] = [];
  for (const [index, mapping] of given.entries()) {
    const before = savedByName.get(mapping.name);
    const sameUrl = before?.settings.url === mapping.settings.url;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(mapping.settings.headers)) {
      if (value !== MASKED_VALUE) {
        headers[name] = value;
        continue;
      }
      const kept = sameUrl && Object.hasOwn(before.settings.headers, name) ? before.settings.headers[name] : undefined;
      if (kept === undefined) return { violation: { field: `mappings[${index}].settings.headers.${name}`, rule: maskRule(mapping, before) } };
      headers[name] = kept;
    }
    mappings.push({ ...mapping, settings: { ...mapping.settings, headers } });
  }
  return { mappings };
}

function maskRule(mapping: ActionsMapping, before: ActionsMapping | undefined): string {
  const why = !before
    ? `no saved mapping is named ${JSON.stringify(mapping.name)} (a renamed or new mapping)`
    : before.settings.url !== mapping.settings.url
      ? `the mapping's URL changed, and a saved value stays with the URL it was set for`
      : 'no value is saved for this header';
  return `${MASKED_VALUE} keeps a saved value, and ${why}; send the value itself`;
}
