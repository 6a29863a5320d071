import {
  COMPUTED_TRAIT_TYPES,
  COUNT_OPS,
  TRAIT_OPS,
  type ComputedTraitDefinition,
  type Condition,
  type PropertyCondition,
  type Scalar,
  type TraitOp,
} from './types';
import { parseWithin } from './within';

/**
 * The audience definition grammar (docs/personas.md), checked node by node so an error names the JSON path of the
 * node that broke it (`definition.all[1].op: unknown operator "equals" ...`): definitions are
 * written by hand and portable between installations, so the message has to be enough to fix one.
 */

export type Checked<T> = { ok: true; value: T } | { ok: false; path: string; message: string };

/** Bounds that keep one definition's SQL small: a tree this size compiles to a few KB of SQL. */
export const LIMITS = {
  depth: 10,
  conditions: 200,
  children: 50,
  where: 20,
  nameLength: 200,
  stringValueLength: 1000,
} as const;

const KINDS = ['trait', 'event', 'all', 'any', 'not'] as const;
type Kind = (typeof KINDS)[number];

const FIELDS: Record<Kind, readonly string[]> = {
  trait: ['trait', 'op', 'value'],
  event: ['event', 'count', 'within', 'where'],
  all: ['all'],
  any: ['any'],
  not: ['not'],
};

const KIND_NAMES: Record<Kind, string> = {
  trait: 'a trait condition',
  event: 'an event condition',
  all: 'an "all" combinator',
  any: 'an "any" combinator',
  not: 'a "not" combinator',
};

/** Thrown inside the walk and turned into a Checked value at the entry points. */
class DefinitionError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const fail = (path: string, message: string): never => {
  throw new DefinitionError(path, message);
};

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : JSON.stringify(value));

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknownFields(node: Record<string, unknown>, allowed: readonly string[], path: string, what: string): void {
  for (const key of Object.keys(node)) {
    if (!allowed.includes(key)) fail(`${path}.${key}`, `is not a field of ${what} (allowed: ${allowed.join(', ')})`);
  }
}

/** Trait, property and event names: any non-empty text without control characters. */
function checkName(value: unknown, path: string, what: string): string {
  if (typeof value !== 'string' || value.length === 0) return fail(path, `must be a non-empty string naming the ${what}`);
  if (value.length > LIMITS.nameLength) return fail(path, `must be at most ${LIMITS.nameLength} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value)) return fail(path, 'must not contain control characters');
  return value;
}

function checkOp<T extends string>(value: unknown, ops: readonly T[], path: string): T {
  if (typeof value !== 'string') return fail(path, `must be one of ${ops.join(', ')}`);
  if (!(ops as readonly string[]).includes(value)) return fail(path, `unknown operator ${JSON.stringify(value)}; expected one of ${ops.join(', ')}`);
  return value as T;
}

/** What each operator compares with: the value's JSON type decides how the SQL compares. */
function checkValue(op: TraitOp, node: Record<string, unknown>, path: string): Scalar | undefined {
  const has = Object.prototype.hasOwnProperty.call(node, 'value');
  const value = node.value;
  if (op === 'exists') {
    if (has) fail(`${path}.value`, 'is not used by "exists" (wrap the condition in {"not": ...} for "does not exist")');
    return undefined;
  }
  if (!has) return fail(`${path}.value`, `is required for "${op}"`);
  if (typeof value === 'string') {
    if (value.length > LIMITS.stringValueLength) fail(`${path}.value`, `must be at most ${LIMITS.stringValueLength} characters`);
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(`${path}.value`, 'must be a finite number');
    return value;
  }
  if (typeof value === 'boolean') {
    if (op !== 'eq' && op !== 'neq' && op !== 'contains') fail(`${path}.value`, `"${op}" compares numbers or strings (such as ISO dates), not booleans`);
    return value;
  }
  return fail(`${path}.value`, `must be a string, number or boolean, not ${describe(value)}`);
}

function checkWithin(value: unknown, path: string): string {
  if (typeof value !== 'string') return fail(path, 'must be a duration such as "30d", "12h", "90m" or "4w"');
  try {
    parseWithin(value);
  } catch (err) {
    fail(path, (err as Error).message);
  }
  return value;
}

function checkPropertyCondition(node: unknown, path: string): PropertyCondition {
  if (!isPlainObject(node)) return fail(path, `must be a property condition such as {"property": "total", "op": "gt", "value": 50}, not ${describe(node)}`);
  rejectUnknownFields(node, ['property', 'op', 'value'], path, 'a property condition');
  const property = checkName(node.property, `${path}.property`, 'event property');
  const op = checkOp(node.op, TRAIT_OPS, `${path}.op`);
  const value = checkValue(op, node, path);
  return value === undefined ? { property, op } : { property, op, value };
}

interface Walk {
  conditions: number;
}

function checkCondition(node: unknown, path: string, depth: number, walk: Walk): Condition {
  if (!isPlainObject(node)) return fail(path, `must be a condition object with one of ${KINDS.join(', ')}, not ${describe(node)}`);
  walk.conditions += 1;
  if (walk.conditions > LIMITS.conditions) fail(path, `a definition may hold at most ${LIMITS.conditions} conditions`);
  if (depth > LIMITS.depth) fail(path, `conditions may nest at most ${LIMITS.depth} levels deep`);

  const kinds = KINDS.filter((k) => Object.prototype.hasOwnProperty.call(node, k));
  if (kinds.length === 0) {
    const keys = Object.keys(node);
    return fail(path, `must have one of ${KINDS.join(', ')}${keys.length ? ` (found ${keys.join(', ')})` : ''}`);
  }
  if (kinds.length > 1) return fail(path, `must have exactly one of ${KINDS.join(', ')}, not both ${kinds[0]} and ${kinds[1]}`);
  const kind = kinds[0];
  rejectUnknownFields(node, FIELDS[kind], path, KIND_NAMES[kind]);

  switch (kind) {
    case 'trait': {
      const trait = checkName(node.trait, `${path}.trait`, 'trait');
      const op = checkOp(node.op, TRAIT_OPS, `${path}.op`);
      const value = checkValue(op, node, path);
      return value === undefined ? { trait, op } : { trait, op, value };
    }
    case 'event': {
      const event = checkName(node.event, `${path}.event`, 'event');
      const condition: Condition = { event };
      if (node.count !== undefined) {
        const count = node.count;
        const at = `${path}.count`;
        if (!isPlainObject(count)) fail(at, `must be an object such as {"op": "gte", "value": 1}, not ${describe(count)}`);
        const c = count as Record<string, unknown>;
        rejectUnknownFields(c, ['op', 'value'], at, 'a count');
        const op = checkOp(c.op, COUNT_OPS, `${at}.op`);
        if (typeof c.value !== 'number' || !Number.isInteger(c.value) || c.value < 0) fail(`${at}.value`, 'must be a whole number, 0 or more');
        condition.count = { op, value: c.value as number };
      }
      if (node.within !== undefined) condition.within = checkWithin(node.within, `${path}.within`);
      if (node.where !== undefined) {
        if (!Array.isArray(node.where)) fail(`${path}.where`, `must be an array of property conditions, not ${describe(node.where)}`);
        const where = node.where as unknown[];
        if (where.length > LIMITS.where) fail(`${path}.where`, `may hold at most ${LIMITS.where} property conditions`);
        condition.where = where.map((w, i) => checkPropertyCondition(w, `${path}.where[${i}]`));
      }
      return condition;
    }
    case 'all':
    case 'any': {
      const children = node[kind];
      if (!Array.isArray(children)) return fail(`${path}.${kind}`, `must be an array of conditions, not ${describe(children)}`);
      if (children.length === 0) fail(`${path}.${kind}`, 'must hold at least one condition');
      if (children.length > LIMITS.children) fail(`${path}.${kind}`, `may hold at most ${LIMITS.children} conditions`);
      const checked = children.map((child, i) => checkCondition(child, `${path}.${kind}[${i}]`, depth + 1, walk));
      return kind === 'all' ? { all: checked } : { any: checked };
    }
    case 'not':
      return { not: checkCondition(node.not, `${path}.not`, depth + 1, walk) };
  }
}

function checked<T>(run: () => T): Checked<T> {
  try {
    return { ok: true, value: run() };
  } catch (err) {
    if (err instanceof DefinitionError) return { ok: false, path: err.path, message: err.message };
    throw err;
  }
}

/** An audience definition: one condition tree. `path` names the definition in messages. */
export function checkAudienceDefinition(input: unknown, path = 'definition'): Checked<Condition> {
  return checked(() => checkCondition(input, path, 1, { conditions: 0 }));
}

/** A computed trait definition: `{type, event, property?, within?}` (property required except for count). */
export function checkComputedTraitDefinition(input: unknown, path = 'definition'): Checked<ComputedTraitDefinition> {
  return checked(() => {
    if (!isPlainObject(input)) return fail(path, `must be an object such as {"type": "sum", "event": "Order Completed", "property": "total"}, not ${describe(input)}`);
    rejectUnknownFields(input, ['type', 'event', 'property', 'within'], path, 'a computed trait definition');
    const type = input.type;
    if (typeof type !== 'string' || !(COMPUTED_TRAIT_TYPES as readonly string[]).includes(type)) {
      fail(`${path}.type`, `${type === undefined ? 'is required' : `unknown type ${describe(type)}`}; expected one of ${COMPUTED_TRAIT_TYPES.join(', ')}`);
    }
    const definition: ComputedTraitDefinition = { type: type as ComputedTraitDefinition['type'], event: checkName(input.event, `${path}.event`, 'event') };
    if (type === 'count') {
      if (input.property !== undefined) fail(`${path}.property`, 'is not used by "count", which counts the events themselves');
    } else {
      definition.property = checkName(input.property, `${path}.property`, `event property "${definition.type}" reads`);
    }
    if (input.within !== undefined) definition.within = checkWithin(input.within, `${path}.within`);
    return definition;
  });
}

/** `definition.all[1].op: unknown operator ...`: the form the API puts in a 400's message. */
export const definitionProblem = (result: Extract<Checked<unknown>, { ok: false }>) => `${result.path}: ${result.message}`;
