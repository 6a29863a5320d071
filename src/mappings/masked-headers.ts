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
 * mapping name and header name; a mask with no saved value stays (and is then sent as written).
 */
export function unmaskedMappings(given: ActionsMapping[], saved: ActionsMapping[]): ActionsMapping[] {
  const savedByName = new Map(saved.map((mapping) => [mapping.name, mapping]));
  return given.map((mapping) => {
    const before = savedByName.get(mapping.name)?.settings.headers ?? {};
    const headers = Object.fromEntries(Object.entries(mapping.settings.headers).map(([name, value]) => [name, value === MASKED_VALUE && before[name] !== undefined ? before[name] : value]));
    return { ...mapping, settings: { ...mapping.settings, headers } };
  });
}
