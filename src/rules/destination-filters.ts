import { compileProgram } from '../programs/compile-program';
import type { FqlCondition, FqlErrorRule } from './fql';
import { conditionMatches } from './fql-match';
import { allowOwnProperties, dropOwnProperties, ownValueAt, pathRule } from './safe-path';
import { sampleKeeps } from './sampling';

/** Segment's Public API filter actions, exactly as it takes them (so a team pastes its filters across). */
export type FilterAction =
  | { type: 'DROP' }
  | { type: 'SAMPLE'; percent: number; path?: string }
  | { type: 'DROP_PROPERTIES'; fields: PropertyFields }
  | { type: 'ALLOW_PROPERTIES'; fields: PropertyFields };

/** A top-level object's key ("" for the message itself) → the keys in it to drop or keep. */
export type PropertyFields = Record<string, string[]>;

/** A filter as the Public API takes it: `{title, description?, enabled, if, actions}`. */
export interface FilterSettings {
  title: string;
  description?: string;
  enabled: boolean;
  if: string;
  actions: FilterAction[];
}

export interface DestinationFilter extends FilterSettings {
  id: string;
}

/** A saved filter with its condition parsed once, ready to run on every message. */
export interface CompiledFilter {
  id: string;
  title: string;
  enabled: boolean;
  condition: FqlCondition;
  actions: FilterAction[];
}

/** Segment: "Segment supports 10 filters per destination". */
export const MAX_FILTERS_PER_DESTINATION = 10;
/** Segment's dashboard: "Name your filter (max. 64 length)". */
export const MAX_FILTER_TITLE_LENGTH = 64;
/** Without a `path`, sampling hashes the message id, so a retried or replayed message gets the same decision. */
export const DEFAULT_SAMPLE_PATH = 'messageId';

export const FILTER_ACTION_TYPES = ['SAMPLE', 'DROP', 'DROP_PROPERTIES', 'ALLOW_PROPERTIES'] as const;
// Segment: "Segment applies destination filters in the following order: Sample, Drop ('Only
// Sends' are Drops), Drop Properties, Allow Properties."
const ACTION_ORDER: readonly FilterAction['type'][] = FILTER_ACTION_TYPES;

/** Why a filter cannot be saved: the field (as the request spells it), the rule, and for FQL the column; `message` reads after the field. */
export interface FilterError {
  field: string;
  rule: FqlErrorRule | 'required' | 'too-long' | 'unknown-action' | 'out-of-range' | 'invalid-fields' | 'too-many-filters';
  message: string;
  position?: number;
}

export type FilterValidation = { ok: true; filter: CompiledFilter } | { ok: false; error: FilterError };

/** Checks a filter as the API receives it (after its JSON schema) and parses its condition. */
export function compileFilter(id: string, settings: FilterSettings): FilterValidation {
  const fail = (error: FilterError): FilterValidation => ({ ok: false, error });
  if (settings.title.trim() === '') return fail({ field: 'title', rule: 'required', message: 'must not be empty' });
  if (settings.title.length > MAX_FILTER_TITLE_LENGTH) {
    return fail({ field: 'title', rule: 'too-long', message: `is at most ${MAX_FILTER_TITLE_LENGTH} characters` });
  }
  const parsed = compileProgram('fql', settings.if);
  if (!parsed.ok) {
    const { column = 1, code = 'invalid', rule } = parsed.error;
    return fail({ field: 'if', rule: code as FqlErrorRule, position: column, message: `at column ${column}: ${rule}` });
  }
  if (settings.actions.length === 0) return fail({ field: 'actions', rule: 'required', message: 'needs at least one action' });
  for (const [index, action] of settings.actions.entries()) {
    const error = actionError(action, `actions[${index}]`);
    if (error) return fail(error);
  }
  return { ok: true, filter: { id, title: settings.title, enabled: settings.enabled, condition: parsed.program, actions: settings.actions } };
}

/** A destination takes at most 10 filters; `existing` is how many it has before this one. */
export function filterCountError(existing: number): FilterError | undefined {
  if (existing < MAX_FILTERS_PER_DESTINATION) return undefined;
  return { field: 'filters', rule: 'too-many-filters', message: `a destination has at most ${MAX_FILTERS_PER_DESTINATION}` };
}

function actionError(action: Record<string, unknown>, field: string): FilterError | undefined {
  switch (action.type) {
    case 'DROP':
      return undefined;
    case 'SAMPLE': {
      const percent = action.percent;
      if (typeof percent !== 'number' || !(percent >= 0 && percent <= 1)) {
        return { field: `${field}.percent`, rule: 'out-of-range', message: 'is a number from 0 to 1' };
      }
      if (action.path !== undefined && typeof action.path !== 'string') {
        return { field: `${field}.path`, rule: 'invalid-fields', message: 'is a field path such as "userId"' };
      }
      const forbidden = typeof action.path === 'string' ? pathRule(action.path, 'path') : undefined;
      if (forbidden) return { field: `${field}.path`, rule: 'forbidden-segment', message: forbidden };
      return undefined;
    }
    case 'DROP_PROPERTIES':
    case 'ALLOW_PROPERTIES': {
      const fields = action.fields;
      const valid =
        fields !== null &&
        typeof fields === 'object' &&
        !Array.isArray(fields) &&
        Object.keys(fields).length > 0 &&
        Object.values(fields).every((keys) => Array.isArray(keys) && keys.every((key) => typeof key === 'string' && key !== ''));
      if (!valid) {
        return {
          field: `${field}.fields`,
          rule: 'invalid-fields',
          message: 'maps an object ("" for the top level) to the keys in it, e.g. {"properties": ["email"]}',
        };
      }
      return fieldsPathError(fields as PropertyFields, `${field}.fields`);
    }
    default:
      return {
        field: `${field}.type`,
        rule: 'unknown-action',
        message: `is one of ${FILTER_ACTION_TYPES.join(', ')}`,
      };
  }
}

/** A `fields` key, or a name listed under it, that would step out of the message into a prototype. */
function fieldsPathError(fields: PropertyFields, field: string): FilterError | undefined {
  for (const [key, names] of Object.entries(fields)) {
    const keyRule = key === '' ? undefined : pathRule(key);
    if (keyRule) return { field, rule: 'forbidden-segment', message: keyRule };
    for (const name of names) {
      const nameRule = pathRule([...(key === '' ? [] : key.split('.')), name], 'path');
      if (nameRule) return { field: `${field}[${JSON.stringify(key)}]`, rule: 'forbidden-segment', message: nameRule };
    }
  }
  return undefined;
}

/** What a destination's filters make of one message: the body to send, or the first filter that stopped it. */
export type FilterOutcome =
  | { send: Record<string, unknown>; matched: CompiledFilter[] }
  | { stop: 'filters' | 'sampled'; filterId: string; matched: CompiledFilter[] };

/**
 * Every enabled filter whose condition the message (as received, before any filter changed it)
 * meets, its actions applied in Segment's order across all of them, on a copy. Drop and allow
 * properties walk own properties only (safe-path.ts), not tsub's `dlv`, which follows a
 * `"constructor.prototype"` key into Object.prototype.
 */
export function applyFilters(message: Record<string, unknown>, filters: readonly CompiledFilter[]): FilterOutcome {
  const matched = filters.filter((filter) => filter.enabled && conditionMatches(filter.condition, message));
  if (matched.length === 0) return { send: message, matched };
  const body = structuredClone(message);
  for (const type of ACTION_ORDER) {
    for (const filter of matched) {
      for (const action of filter.actions) {
        if (action.type !== type) continue;
        const kept = applyAction(action, message, body);
        if (!kept) {
          return { stop: type === 'SAMPLE' ? 'sampled' : 'filters', filterId: filter.id, matched };
        }
      }
    }
  }
  return { send: body, matched };
}

/** Whether the message is kept by one action; DROP_PROPERTIES and ALLOW_PROPERTIES change `body` (the copy). */
function applyAction(action: FilterAction, message: Record<string, unknown>, body: Record<string, unknown>): boolean {
  switch (action.type) {
    case 'SAMPLE':
      return sampleKeeps(ownValueAt(message, action.path || DEFAULT_SAMPLE_PATH), action.percent);
    case 'DROP':
      return false;
    case 'DROP_PROPERTIES':
      dropOwnProperties(body, action.fields);
      return true;
    case 'ALLOW_PROPERTIES':
      allowOwnProperties(body, action.fields);
      return true;
  }
}
