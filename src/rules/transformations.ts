import { compileProgram } from '../programs/compile-program';
import type { FqlCondition, FqlErrorRule } from './fql';
import { conditionMatches } from './fql-match';
import { applyCase, type FqlProperty } from './fql-property';
import { forbiddenSegment, ownValueAt, pathRule } from './safe-path';

/**
 * Segment Protocols Transformations (Public API TransformationV1), compiled at save and applied
 * per message: pure, no I/O. `if` is FQL (the filters' engine); a matching transformation drops
 * the message, or renames its event, moves properties, sets values, computes one property and keeps
 * only the allowed properties, on a copy (the input is never changed).
 */

export interface PropertyRename {
  oldName: string;
  newName: string;
}
export interface PropertyValueTransformation {
  propertyPaths: string[];
  propertyValue: string;
}
export interface FqlDefinedProperty {
  fql: string;
  propertyName: string;
}

/** What a transformation does, as the Public API writes it (beside its sourceId and destinationMetadataId). */
export interface TransformationRules {
  name: string;
  enabled: boolean;
  if: string;
  drop?: boolean;
  newEventName?: string;
  propertyRenames?: PropertyRename[];
  propertyValueTransformations?: PropertyValueTransformation[];
  fqlDefinedProperties?: FqlDefinedProperty[];
  allowProperties?: string[];
}

/** Segment: "Limited to 10 properties" (propertyValueTransformations), "Limited to 1 property right now" (fqlDefinedProperties). */
export const MAX_VALUE_PATHS = 10;
export const MAX_FQL_DEFINED_PROPERTIES = 1;
/** Segment: JSON paths "up to four levels deep" below properties or traits. */
export const MAX_RENAME_DEPTH = 4;
/** A value path reaches at most this deep from the message's top (properties + four levels). */
export const MAX_VALUE_PATH_DEPTH = 5;
/** The top-level fields no transformation may set: Switchyard knows the message by them. */
const FIXED_FIELDS = ['type', 'messageId'];

/** A path into the message, one name per segment, or (for renames and allowProperties) one under properties/traits chosen by the message's type. */
type Target = { absolute: string[] } | { relative: string[] };

export interface CompiledTransformation {
  id: string;
  name: string;
  enabled: boolean;
  condition: FqlCondition;
  drop: boolean;
  newEventName?: string;
  renames: Array<{ from: Target; to: Target }>;
  values: Array<{ path: string[]; value: string }>;
  computed: Array<{ property: FqlProperty; path: string[] }>;
  allow: Target[];
}

export interface TransformationError {
  field: string;
  rule: FqlErrorRule | 'required' | 'too-many' | 'too-deep' | 'invalid-path' | 'conflict' | 'fixed-field' | 'invalid-fql' | 'does-nothing';
  message: string;
}

export type TransformationValidation = { ok: true; transformation: CompiledTransformation } | { ok: false; error: TransformationError };

/**
 * A path as Segment writes it: dot-separated, `\.` a literal dot in a name. Arrays are not reached
 * (Segment: `products.$.id` is not supported).
 */
export function splitPath(path: string): string[] {
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < path.length; i++) {
    if (path[i] === '\\' && (path[i + 1] === '.' || path[i + 1] === '\\')) current += path[++i];
    else if (path[i] === '.') {
      segments.push(current);
      current = '';
    } else current += path[i];
  }
  segments.push(current);
  return segments;
}

/** Why a path cannot be used, after its field, or undefined. */
function pathProblem(segments: string[], shown: string, maxDepth: number): string | undefined {
  if (segments.some((s) => s === '')) return `"${shown}" has an empty name (a leading, trailing or doubled ".")`;
  if (segments.some((s) => s === '$')) return `"${shown}" reaches into an array ("$"), which Segment's transformations do not support`;
  if (segments.length > maxDepth) return `"${shown}" is more than ${maxDepth} levels deep`;
  return pathRule(segments, 'path', shown);
}

/** A rename or allowProperties name: under properties/traits by the message's type, unless it starts with `properties.` or `traits.` (both forms occur in Segment's exports). */
function targetOf(path: string): Target {
  const segments = splitPath(path);
  return (segments[0] === 'properties' || segments[0] === 'traits') && segments.length > 1 ? { absolute: segments } : { relative: segments };
}
const depthOf = (target: Target) => ('absolute' in target ? target.absolute.length - 1 : target.relative.length);
const segmentsOf = (target: Target) => ('absolute' in target ? target.absolute : target.relative);

/** The absolute paths a target may stand for, to find conflicts at save. */
const possiblePaths = (target: Target): string[] =>
  'absolute' in target ? [target.absolute.join('\u0000')] : ['properties', 'traits'].map((root) => [root, ...target.relative].join('\u0000'));

/** Checks a transformation as the API receives it (after its JSON schema), parses its `if` and its FQL property. */
export function compileTransformation(id: string, rules: TransformationRules): TransformationValidation {
  const fail = (field: string, rule: TransformationError['rule'], message: string): TransformationValidation => ({ ok: false, error: { field, rule, message } });
  if (rules.name.trim() === '') return fail('name', 'required', 'must not be empty');
  const parsed = compileProgram('fql', rules.if);
  if (!parsed.ok) {
    const { column = 1, code = 'invalid', rule } = parsed.error;
    return fail('if', code as FqlErrorRule, `at column ${column}: ${rule}`);
  }
  const renames = rules.propertyRenames ?? [];
  const valueRules = rules.propertyValueTransformations ?? [];
  const fqlDefined = rules.fqlDefinedProperties ?? [];
  const allowed = rules.allowProperties ?? [];
  if (rules.newEventName !== undefined && rules.newEventName.trim() === '') return fail('newEventName', 'required', 'must not be empty (leave it out to keep the event name)');
  if (!rules.drop && rules.newEventName === undefined && renames.length + valueRules.length + fqlDefined.length + allowed.length === 0) {
    return fail('transformation', 'does-nothing', 'needs drop, newEventName, propertyRenames, propertyValueTransformations, fqlDefinedProperties or allowProperties');
  }
  if (fqlDefined.length > 0 && (renames.length > 0 || valueRules.length > 0)) {
    return fail('fqlDefinedProperties', 'conflict', 'cannot be combined with propertyRenames or propertyValueTransformations (Segment refuses the same)');
  }
  if (fqlDefined.length > MAX_FQL_DEFINED_PROPERTIES) return fail('fqlDefinedProperties', 'too-many', `holds at most ${MAX_FQL_DEFINED_PROPERTIES} property`);

  const compiledRenames: CompiledTransformation['renames'] = [];
  const renamed = new Set<string>();
  for (const [i, rename] of renames.entries()) {
    for (const key of ['oldName', 'newName'] as const) {
      const target = targetOf(rename[key]);
      const problem = pathProblem(segmentsOf(target), rename[key], 'absolute' in target ? MAX_RENAME_DEPTH + 1 : MAX_RENAME_DEPTH);
      if (problem) return fail(`propertyRenames[${i}].${key}`, depthOf(target) > MAX_RENAME_DEPTH ? 'too-deep' : 'invalid-path', problem);
      for (const path of possiblePaths(target)) renamed.add(path);
    }
    compiledRenames.push({ from: targetOf(rename.oldName), to: targetOf(rename.newName) });
  }

  const values: CompiledTransformation['values'] = [];
  const set = new Set<string>();
  for (const [i, { propertyPaths, propertyValue }] of valueRules.entries()) {
    for (const [j, path] of propertyPaths.entries()) {
      const field = `propertyValueTransformations[${i}].propertyPaths[${j}]`;
      const segments = splitPath(path);
      const problem = pathProblem(segments, path, MAX_VALUE_PATH_DEPTH);
      if (problem) return fail(field, segments.length > MAX_VALUE_PATH_DEPTH ? 'too-deep' : 'invalid-path', problem);
      if (segments.length === 1 && FIXED_FIELDS.includes(segments[0])) return fail(field, 'fixed-field', `"${path}" cannot be set: Switchyard knows the message by its type and messageId`);
      const key = segments.join('\u0000');
      if (set.has(key)) return fail(field, 'conflict', `"${path}" is set twice (Segment refuses two value transformations of one path)`);
      if (renamed.has(key)) return fail(field, 'conflict', `"${path}" is also renamed in propertyRenames (Segment refuses a path in both)`);
      set.add(key);
      values.push({ path: segments, value: propertyValue });
    }
  }
  if (values.length > MAX_VALUE_PATHS) return fail('propertyValueTransformations', 'too-many', `set at most ${MAX_VALUE_PATHS} paths (${values.length} given)`);

  const computed: CompiledTransformation['computed'] = [];
  for (const [i, { fql, propertyName }] of fqlDefined.entries()) {
    const program = compileProgram('fql-property', fql);
    if (!program.ok) return fail(`fqlDefinedProperties[${i}].fql`, 'invalid-fql', `${program.error.column ? `at column ${program.error.column}: ` : ''}${program.error.rule}`);
    const path = splitPath(propertyName);
    const problem = pathProblem(path, propertyName, MAX_VALUE_PATH_DEPTH);
    if (problem) return fail(`fqlDefinedProperties[${i}].propertyName`, 'invalid-path', problem);
    if (path.length === 1 && FIXED_FIELDS.includes(path[0])) return fail(`fqlDefinedProperties[${i}].propertyName`, 'fixed-field', `"${propertyName}" cannot be set: Switchyard knows the message by its type and messageId`);
    computed.push({ property: program.program, path });
  }

  const allow: Target[] = [];
  for (const [i, name] of allowed.entries()) {
    const target = targetOf(name);
    const problem = pathProblem(segmentsOf(target), name, 'absolute' in target ? MAX_RENAME_DEPTH + 1 : MAX_RENAME_DEPTH);
    if (problem) return fail(`allowProperties[${i}]`, 'invalid-path', problem);
    allow.push(target);
  }

  return {
    ok: true,
    transformation: {
      id,
      name: rules.name,
      enabled: rules.enabled,
      condition: parsed.program,
      drop: rules.drop === true,
      ...(rules.newEventName !== undefined && { newEventName: rules.newEventName }),
      renames: compiledRenames,
      values,
      computed,
      allow,
    },
  };
}

type Body = Record<string, unknown>;
const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Where a target points in this message: relative names are under `traits` for identify and group, `properties` otherwise. */
function resolve(target: Target, type: unknown): string[] {
  if ('absolute' in target) return target.absolute;
  return [type === 'identify' || type === 'group' ? 'traits' : 'properties', ...target.relative];
}

/** The own object at a path, made (as `{}`) where missing; undefined when a step is something else than an object. */
function objectAt(body: Body, path: readonly string[]): Body | undefined {
  let at: Body = body;
  for (const key of path) {
    if (forbiddenSegment([key]) !== undefined) return undefined;
    if (!Object.hasOwn(at, key)) at[key] = {};
    const next = at[key];
    if (!isObject(next)) return undefined;
    at = next;
  }
  return at;
}

/** Sets a value at a path (own properties only); false when nothing changed or a step is not an object. */
function setAt(body: Body, path: readonly string[], value: unknown): boolean {
  const parent = objectAt(body, path.slice(0, -1));
  const key = path[path.length - 1];
  if (!parent || forbiddenSegment([key]) !== undefined) return false;
  if (Object.hasOwn(parent, key) && parent[key] === value) return false;
  parent[key] = value;
  return true;
}

function deleteAt(body: Body, path: readonly string[]): boolean {
  const parent = ownValueAt(body, path.slice(0, -1));
  const key = path[path.length - 1];
  if (!isObject(parent) || !Object.hasOwn(parent, key)) return false;
  delete parent[key];
  return true;
}

/**
 * One matching transformation on a copy of `event`: every value it reads comes from `event` as it
 * was before it (as tsub's map_properties reads a snapshot), so the order of its entries does not
 * matter and two renames may swap names. `changed`: whether the copy differs in any way.
 */
export function transformOne(transformation: CompiledTransformation, event: Body): { event: Body; changed: boolean } {
  const out = structuredClone(event);
  let changed = false;
  const type = event.type;
  if (transformation.newEventName !== undefined && type === 'track') changed = setAt(out, ['event'], transformation.newEventName) || changed;
  const moves = transformation.renames
    .map(({ from, to }) => ({ from: resolve(from, type), to: resolve(to, type) }))
    .filter(({ from }) => ownValueAt(event, from) !== undefined)
    .map(({ from, to }) => ({ from, to, value: structuredClone(ownValueAt(event, from)) }));
  for (const { from } of moves) changed = deleteAt(out, from) || changed;
  for (const { to, value } of moves) changed = setAt(out, to, value) || changed;
  for (const { path, value } of transformation.values) changed = setAt(out, path, value) || changed;
  for (const { property, path } of transformation.computed) {
    const input = 'literal' in property.arg ? property.arg.literal : ownValueAt(event, property.arg.path);
    // A field that is missing or not a string gives no value: the property is not written.
    if (typeof input === 'string') changed = setAt(out, path, applyCase(property.fn, input)) || changed;
  }
  if (transformation.allow.length > 0) {
    const keep = new Map<string, { parent: string[]; names: Set<string> }>();
    for (const target of transformation.allow) {
      const path = resolve(target, type);
      const parent = path.slice(0, -1);
      const key = parent.join('\u0000');
      if (!keep.has(key)) keep.set(key, { parent, names: new Set() });
      keep.get(key)!.names.add(path[path.length - 1]);
    }
    for (const { parent, names } of keep.values()) {
      const object = ownValueAt(out, parent);
      if (!isObject(object)) continue;
      for (const name of Object.keys(object)) {
        if (!names.has(name)) {
          delete object[name];
          changed = true;
        }
      }
    }
  }
  return { event: changed ? out : event, changed };
}

/** What a list of transformations makes of one message: the event to go on with and the ids of those that changed it, or the one that dropped it. */
export type TransformationOutcome = { send: Body; changedBy: string[] } | { drop: string };

const memo = new WeakMap<object, WeakMap<readonly CompiledTransformation[], TransformationOutcome>>();

/**
 * The enabled transformations in saved order, each matched against the event as the one before
 * left it; a matching `drop` stops it (its other transforms ignored, as Segment says). A list
 * that changes nothing hands back the same object. The outcome is remembered per (event object,
 * list): the source-scoped list gives every destination of a message the same object, so a
 * message transformed the same way for all of them is sealed once, not once per destination.
 */
export function applyTransformations(event: Body, transformations: readonly CompiledTransformation[]): TransformationOutcome {
  if (transformations.length === 0) return { send: event, changedBy: [] };
  const known = memo.get(event)?.get(transformations);
  if (known) return known;
  let current = event;
  const changedBy: string[] = [];
  let outcome: TransformationOutcome | undefined;
  for (const transformation of transformations) {
    if (!transformation.enabled || !conditionMatches(transformation.condition, current)) continue;
    if (transformation.drop) {
      outcome = { drop: transformation.id };
      break;
    }
    const result = transformOne(transformation, current);
    if (result.changed) {
      current = result.event;
      changedBy.push(transformation.id);
    }
  }
  outcome ??= { send: current, changedBy };
  if (!memo.has(event)) memo.set(event, new WeakMap());
  memo.get(event)!.set(transformations, outcome);
  return outcome;
}
