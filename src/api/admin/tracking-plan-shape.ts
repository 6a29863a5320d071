import type { NewTrackingPlanRule } from '../../store/types';
import { badRequest } from '../errors';

/**
 * Tracking-plan rules as Segment writes them, read into Switchyard's rule: a Terraform export's
 * `json_schema` (a JSON string) or the Public API's `jsonSchema` (an object); `key = null` on a
 * COMMON rule; a draft-04 schema's `id` and boolean `exclusiveMinimum`/`exclusiveMaximum` (older
 * Segment plans) in the draft-07 form the validator speaks; the read-only fields of a GET answer
 * (`createdAt`, `updatedAt`, `deprecatedAt`, `warnings`) accepted and dropped, so what GET answers
 * can be PUT back unchanged. Pure: the route validates the shape first, then calls this.
 */
export interface SegmentRuleInput {
  type: string;
  key?: string | null;
  newKey?: string | null;
  version: number;
  jsonSchema?: Record<string, unknown> | string;
  json_schema?: Record<string, unknown> | string;
}

/** A key as given, its surrounding white space kept: flagged, since it rarely is what the sender meant. */
export function keyWarning(key: string | undefined, at: string): string | undefined {
  if (key === undefined || key.trim() === key) return undefined;
  return `${at}.key: ${JSON.stringify(key)} has white space around it; it is kept as given, so only an event named exactly so matches this rule`;
}

/** One rule read from Segment's shape; throws a 400 naming the field for a schema string that is not a JSON object, or two schemas. */
export function readSegmentRule(rule: SegmentRuleInput, at: string): NewTrackingPlanRule & { newKey?: string } {
  if (rule.jsonSchema !== undefined && rule.json_schema !== undefined) throw badRequest(`${at}.json_schema: give jsonSchema or json_schema, not both`);
  const field = rule.jsonSchema !== undefined ? 'jsonSchema' : 'json_schema';
  const given = rule.jsonSchema ?? rule.json_schema;
  if (given === undefined) throw badRequest(`${at}.jsonSchema: is required`);
  let schema: unknown = given;
  if (typeof given === 'string') {
    try {
      schema = JSON.parse(given);
    } catch (err) {
      throw badRequest(`${at}.${field}: is not JSON (${(err as Error).message})`);
    }
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw badRequest(`${at}.${field}: must be a JSON object (a JSON Schema)`);
  const read: NewTrackingPlanRule & { newKey?: string } = { type: rule.type, version: rule.version, jsonSchema: fromDraft04(schema as Record<string, unknown>) };
  if (rule.key !== undefined && rule.key !== null) read.key = rule.key;
  if (rule.newKey !== undefined && rule.newKey !== null) read.newKey = rule.newKey;
  return read;
}

const DRAFT_04 = /^https?:\/\/json-schema\.org\/draft-04\/schema#?$/;
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
/** Where a value is data, not a schema: nothing below them is rewritten. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'labels']);
/** Where an object maps names to schemas: the names are not keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A draft-04 schema in draft-07's words, exactly what it meant: `id` → `$id`, a boolean
 * `exclusiveMinimum: true` beside `minimum` → `exclusiveMinimum: <minimum>` (likewise maximum), and
 * a `$schema` naming draft-04 → draft-07. A draft-07 schema comes back unchanged (the same object).
 */
export function fromDraft04(schema: Record<string, unknown>): Record<string, unknown> {
  if (!looksDraft04(schema)) return schema;
  return rewriteSchema(schema, true);
}

function looksDraft04(schema: Record<string, unknown>): boolean {
  if (typeof schema.$schema === 'string' && DRAFT_04.test(schema.$schema)) return true;
  let found = false;
  walkSchemas(schema, (s) => {
    if (typeof s.id === 'string' || typeof s.exclusiveMinimum === 'boolean' || typeof s.exclusiveMaximum === 'boolean') found = true;
  });
  return found;
}

function walkSchemas(schema: Record<string, unknown>, visit: (schema: Record<string, unknown>) => void): void {
  visit(schema);
  for (const [keyword, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(keyword)) continue;
    if (SCHEMA_MAPS.has(keyword) && isObject(value)) {
      for (const sub of Object.values(value)) if (isObject(sub)) walkSchemas(sub, visit);
    } else if (Array.isArray(value)) {
      for (const sub of value) if (isObject(sub)) walkSchemas(sub, visit);
    } else if (isObject(value)) walkSchemas(value, visit);
  }
}

function rewriteSchema(schema: Record<string, unknown>, root: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'id' && typeof value === 'string' && schema.$id === undefined) {
      out.$id = value;
    } else if (keyword === '$schema' && root && typeof value === 'string' && DRAFT_04.test(value)) {
      out.$schema = DRAFT_07;
    } else if ((keyword === 'exclusiveMinimum' || keyword === 'exclusiveMaximum') && typeof value === 'boolean') {
      const bound = schema[keyword === 'exclusiveMinimum' ? 'minimum' : 'maximum'];
      // true with its bound: the bound becomes exclusive (the inclusive one is dropped below); false means nothing.
      if (value && typeof bound === 'number') out[keyword] = bound;
    } else if ((keyword === 'minimum' || keyword === 'maximum') && schema[keyword === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] === true) {
      // replaced by the exclusive bound above
    } else if (DATA_KEYWORDS.has(keyword)) {
      out[keyword] = value;
    } else if (SCHEMA_MAPS.has(keyword) && isObject(value)) {
      out[keyword] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, isObject(sub) ? rewriteSchema(sub, false) : sub]));
    } else if (Array.isArray(value)) {
      out[keyword] = (value as unknown[]).map((sub): unknown => (isObject(sub) ? rewriteSchema(sub, false) : sub));
    } else if (isObject(value)) {
      out[keyword] = rewriteSchema(value, false);
    } else {
      out[keyword] = value;
    }
  }
  return out;
}
