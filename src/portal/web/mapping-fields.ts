/**
 * A mapping as the form edits it, and back (pure: no DOM, unit-tested). The form shows Segment's
 * Webhooks (Actions) mapping as fields: name, trigger, method, URL, headers as name → value rows
 * and the data as key → directive rows. What the form has no field for (Segment's `id`,
 * `actionId`, `settings.batch_size`, a nested data object's own keys, …) is kept as it came, so a
 * round trip through the form changes only what was edited.
 */

/** A mapping in Segment's Webhooks (Actions) shape, as the admin API shows it (header values masked). */
export interface Mapping {
  name: string;
  enabled: boolean;
  trigger: string;
  settings: { url: string; method: string; headers: Record<string, string>; data: Record<string, unknown> } & Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * How a data field's value is written: a path into the event (`@path`), a template
 * (`@template`), a fixed text, or any other directive or value as JSON (`@if`, numbers, objects).
 */
export const FIELD_KINDS = ['path', 'template', 'text', 'json'] as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

export const FIELD_KIND_LABELS: Record<FieldKind, string> = { path: '@path', template: '@template', text: 'text', json: 'JSON' };

export interface FieldRow {
  key: string;
  kind: FieldKind;
  value: string;
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
  fields: FieldRow[];
  /** The mapping's other keys, as they came. */
  rest: Record<string, unknown>;
  /** The settings' other keys, as they came. */
  settingsRest: Record<string, unknown>;
}

export const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The one-key directive `{"@path": "…"}` / `{"@template": "…"}` with a string: its text. */
function single(value: unknown, directive: string): string | undefined {
  if (!isRecord(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === directive && typeof value[directive] === 'string' ? value[directive] : undefined;
}

/** A data field as a row: the simplest kind that says it exactly. */
export function fieldRowOf(key: string, value: unknown): FieldRow {
  const path = single(value, '@path');
  if (path !== undefined) return { key, kind: 'path', value: path };
  const template = single(value, '@template');
  if (template !== undefined) return { key, kind: 'template', value: template };
  if (typeof value === 'string') return { key, kind: 'text', value };
  return { key, kind: 'json', value: JSON.stringify(value) };
}

/** A row's value as the mapping holds it; a JSON row that does not parse is an error naming its key. */
export function fieldValueOf(row: FieldRow): unknown {
  switch (row.kind) {
    case 'path':
      return { '@path': row.value };
    case 'template':
      return { '@template': row.value };
    case 'text':
      return row.value;
    case 'json':
      try {
        return JSON.parse(row.value) as unknown;
      } catch (err) {
        throw new Error(`data field "${row.key}": not JSON (${(err as Error).message})`);
      }
  }
}

export function draftOf(mapping: unknown): MappingDraft {
  const m = isRecord(mapping) ? mapping : {};
  const { name, enabled, trigger, settings, ...rest } = m;
  const s = isRecord(settings) ? settings : {};
  const { url, method, headers, data, ...settingsRest } = s;
  return {
    name: typeof name === 'string' ? name : '',
    enabled: enabled !== false,
    trigger: typeof trigger === 'string' ? trigger : '',
    method: typeof method === 'string' ? method : 'POST',
    url: typeof url === 'string' ? url : '',
    headers: isRecord(headers) ? Object.entries(headers).map(([n, v]) => ({ name: n, value: String(v) })) : [],
    fields: isRecord(data) ? Object.entries(data).map(([key, value]) => fieldRowOf(key, value)) : [],
    rest,
    settingsRest,
  };
}

/** The draft as the API takes it; rows without a name or key are left out (a blank row is no field). */
export function mappingOf(draft: MappingDraft): Mapping {
  const headers = Object.fromEntries(draft.headers.filter((row) => row.name.trim()).map((row) => [row.name.trim(), row.value]));
  const data = Object.fromEntries(draft.fields.filter((row) => row.key.trim()).map((row) => [row.key.trim(), fieldValueOf(row)]));
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
  fields: [{ key: 'event', kind: 'path', value: '$.event' }],
  rest: {},
  settingsRest: {},
});
