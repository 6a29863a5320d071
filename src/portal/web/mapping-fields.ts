import { nodeOf, valueOf, type FieldNode } from './mapping-directives';

/**
 * A mapping as the form edits it, and back (pure: no DOM, unit-tested). The form shows Segment's
 * Webhooks (Actions) mapping as fields: name, trigger, method, URL, headers as name → value rows
 * and the data as nested fields and directives (mapping-directives.ts). What the form has no field for (Segment's `id`,
 * `actionId`, `settings.batch_size`, …) is kept as it came, so a
 * round trip through the form changes only what was edited.
 */

/** A mapping in Segment's Webhooks (Actions) shape, as the admin API shows it (header values masked). */
export interface Mapping {
  name: string;
  enabled: boolean;
  trigger: string;
  settings: { url: string; method: string; headers: Record<string, string>; data: Record<string, unknown> } & Record<string, unknown>;
  /** Shown by the API while the mapping's URL is paused; not part of the mapping (a PATCH refuses it). */
  backpressure?: { until: string; reason: string };
  [key: string]: unknown;
}

export interface HeaderRow {
  name: string;
  value: string;
}

export interface MappingDraft {
  name: string;
  enabled: boolean;
  trigger: string;
  method: string;
  url: string;
  headers: HeaderRow[];
  /** The body: nested fields (an object) or one directive, such as the whole event. */
  data: FieldNode;
  /** The mapping's other keys, as they came. */
  rest: Record<string, unknown>;
  /** The settings' other keys, as they came. */
  settingsRest: Record<string, unknown>;
}

export const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function draftOf(mapping: unknown): MappingDraft {
  const m = isRecord(mapping) ? mapping : {};
  // `backpressure` is what the API shows of the URL now, not part of the mapping: a PATCH refuses it.
  const { name, enabled, trigger, settings, backpressure: _shown, ...rest } = m;
  const s = isRecord(settings) ? settings : {};
  const { url, method, headers, data, ...settingsRest } = s;
  return {
    name: typeof name === 'string' ? name : '',
    enabled: enabled !== false,
    trigger: typeof trigger === 'string' ? trigger : '',
    method: typeof method === 'string' ? method : 'POST',
    url: typeof url === 'string' ? url : '',
    headers: isRecord(headers) ? Object.entries(headers).map(([n, v]) => ({ name: n, value: String(v) })) : [],
    data: data === undefined ? { kind: 'fields', fields: [] } : nodeOf(data),
    rest,
    settingsRest,
  };
}

/** The draft as the API takes it; rows without a name or key are left out (a blank row is no field); a value that does not parse is an error naming its field. */
export function mappingOf(draft: MappingDraft): Mapping {
  const headers = Object.fromEntries(draft.headers.filter((row) => row.name.trim()).map((row) => [row.name.trim(), row.value]));
  const data = valueOf(draft.data) as Record<string, unknown>;
  return {
    ...draft.rest,
    name: draft.name,
    enabled: draft.enabled,
    trigger: draft.trigger,
    settings: { ...draft.settingsRest, url: draft.url, method: draft.method, headers, data },
  };
}

/** A new mapping's starting point in the form. */
export const blankDraft = (n: number): MappingDraft => ({
  name: `Mapping ${n}`,
  enabled: true,
  trigger: 'type = "track"',
  method: 'POST',
  url: 'https://',
  headers: [],
  data: { kind: 'fields', fields: [{ key: 'event', node: { kind: 'path', text: '$.event' } }] },
  rest: {},
  settingsRest: {},
});
