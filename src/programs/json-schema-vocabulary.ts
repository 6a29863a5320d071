import { JSON_SCHEMA_BOUNDS } from './bounds';
import { FORMAT_NAMES } from './json-schema-formats';
import { re2Problem } from './re2';

/**
 * The closed vocabulary of a tracking-plan rule: the JSON Schema keywords and formats Segment's
 * rules use, and nothing that reaches outside the rule, registers anything, runs asynchronously or
 * costs more than the bounds say (bounds.ts). Pure: walks the schema once, answers the first
 * problem (a JSON Pointer into the schema and the rule it breaks) or a copy ready for the
 * validator: the root's `$id`/`id` dropped (they would name the rule in a shared registry), a
 * draft-04 or draft-06 schema put in draft-07's words.
 */

/** Keywords whose value is one schema. */
const SCHEMA_VALUED = new Set(['not', 'if', 'then', 'else', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** Keywords whose value is data (any JSON, never walked as a schema); `labels` is Segment's own. */
const DATA_VALUED = new Set(['enum', 'const', 'default', 'examples', 'labels']);
/** Keywords with a plain value (a number, a string, a list of names), checked by the validator's meta-schema. */
const PLAIN = new Set([
  'type', 'required', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems', 'uniqueItems', 'minContains', 'maxContains',
  'minProperties', 'maxProperties', 'dependentRequired', 'title', 'description', '$comment', 'readOnly', 'writeOnly', 'deprecated',
]);
/** Where a rule keeps the parts its `$ref`s name: only at its root. */
const DEFINITIONS = ['definitions', '$defs'] as const;
/** Every keyword a rule may use (besides `$ref`, `$id`/`id` and `$schema`): each violation's sentence is written for these (plans/violation-text.ts). */
export const VOCABULARY_KEYWORDS: readonly string[] = [...SCHEMA_VALUED, ...SCHEMA_LISTS, ...SCHEMA_MAPS, ...DATA_VALUED, ...PLAIN, ...DEFINITIONS, 'items', 'dependencies'];

/** Keywords that would make a rule asynchronous, or let it be referred to from elsewhere, or refer dynamically. */
const REFUSED: Record<string, string> = {
  $async: '`$async` is not allowed: a rule is checked synchronously, as each call arrives',
  $anchor: '`$anchor` is not allowed: a rule names its parts only as #/definitions/… or #/$defs/…',
  $dynamicAnchor: '`$dynamicAnchor` is not allowed: a rule names its parts only as #/definitions/… or #/$defs/…',
  $dynamicRef: '`$dynamicRef` is not allowed: use a `$ref` to #/definitions/… or #/$defs/…',
  $recursiveAnchor: '`$recursiveAnchor` is not allowed: a rule names its parts only as #/definitions/… or #/$defs/…',
  $recursiveRef: '`$recursiveRef` is not allowed: use a `$ref` to #/definitions/… or #/$defs/…',
  $vocabulary: '`$vocabulary` is not allowed: a rule uses the closed vocabulary documented in docs/api.md',
};

/** The drafts a rule may name in `$schema` (a trailing `#` ignored); draft-07 when it names none, as on Segment. */
const DRAFT_URIS = {
  'draft-04': ['http://json-schema.org/draft-04/schema', 'https://json-schema.org/draft-04/schema'],
  'draft-06': ['http://json-schema.org/draft-06/schema', 'https://json-schema.org/draft-06/schema'],
  'draft-07': ['http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft-07/schema'],
  '2019-09': ['https://json-schema.org/draft/2019-09/schema', 'http://json-schema.org/draft/2019-09/schema'],
  '2020-12': ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft/2020-12/schema'],
} as const;
export type Draft = keyof typeof DRAFT_URIS;
/** The validator a draft is checked by: draft-04 and draft-06 rules are put in draft-07's words first. */
export type ValidatorDraft = 'draft-07' | '2019-09' | '2020-12';

/** The draft a `$schema` names, or undefined for one the boundary does not speak. */
export function draftOf(schemaUri: unknown): Draft | undefined {
  if (schemaUri === undefined) return 'draft-07';
  if (typeof schemaUri !== 'string') return undefined;
  const uri = schemaUri.replace(/#$/, '');
  return (Object.keys(DRAFT_URIS) as Draft[]).find((draft) => (DRAFT_URIS[draft] as readonly string[]).includes(uri));
}

/** Whether an `$id` (or draft-04 `id`) names a JSON Schema meta-schema, any draft's or any of its vocabularies'. */
export function namesMetaSchema(id: unknown): boolean {
  return typeof id === 'string' && /^https?:\/\/json-schema\.org\//i.test(id.trim());
}

export interface VocabularyProblem {
  /** JSON Pointer inside the schema, '' for the schema as a whole. */
  path: string;
  rule: string;
}

export type CheckedSchema = { ok: true; draft: ValidatorDraft; schema: Record<string, unknown> } | { ok: false; problem: VocabularyProblem };

/** RFC 6901's escapes, and percent-encoding for a colon, a percent sign or white space: a 400 reads `field: rule`. */
export const pointerSegment = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1').replace(/[%:\s]/gu, (c) => encodeURIComponent(c));

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

class Refused extends Error {
  constructor(readonly problem: VocabularyProblem) {
    super(problem.rule);
  }
}
const refuse = (path: string, rule: string): never => {
  throw new Refused({ path, rule });
};

/** The definition a local `$ref` names (`definitions/name`), or a refusal. */
function refTarget(ref: unknown, at: string): string {
  if (typeof ref !== 'string') return refuse(at, '`$ref` must be a string');
  const match = /^#\/(definitions|\$defs)\/([^/]+)$/.exec(ref);
  if (!match) return refuse(at, `\`$ref\` must point inside the rule, to #/definitions/<name> or #/$defs/<name> (got ${JSON.stringify(ref.slice(0, 120))})`);
  let name: string;
  try {
    name = decodeURIComponent(match[2]);
  } catch {
    return refuse(at, '`$ref` is not a valid URI fragment');
  }
  return `${match[1]}/${name.replace(/~1/g, '/').replace(/~0/g, '~')}`;
}

/** A draft-04 schema's boolean `exclusiveMinimum`/`exclusiveMaximum` in draft-06+ words (the bound itself). */
function draft04Bounds(copy: Record<string, unknown>): void {
  for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof copy[exclusive] !== 'boolean') continue;
    if (copy[exclusive] === true && typeof copy[bound] === 'number') {
      copy[exclusive] = copy[bound];
      delete copy[bound];
    } else delete copy[exclusive];
  }
}

interface Walk {
  draft: Draft;
  /** `$ref` targets met, with where each was met, to check against the definitions once all are known. */
  refs: Array<{ target: string; at: string }>;
}

/** One schema node checked and copied; `root` allows what only a rule's root may carry. */
function walkSchema(node: unknown, at: string, walk: Walk, root = false): unknown {
  if (typeof node === 'boolean') return node;
  if (!isObject(node)) return refuse(at, 'must be a schema (an object or true/false)');
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${pointerSegment(key)}`;
    if (key in REFUSED) refuse(here, REFUSED[key]);
    if (key === '$id' || key === 'id') {
      if (namesMetaSchema(value)) refuse(here, `\`${key}\` must not name a JSON Schema meta-schema`);
      if (key === '$id' && !root) refuse(here, '`$id` is allowed only at the root of a rule');
      // `id` below the root is draft-04's `$id`; in later drafts an unknown keyword.
      if (key === 'id' && !root) refuse(here, walk.draft === 'draft-04' ? '`id` is allowed only at the root of a rule' : 'unknown keyword "id"');
      continue; // The root's id is dropped: a rule registers nothing, so nothing can collide with it.
    }
    if (key === '$schema') {
      if (!root) refuse(here, '`$schema` is allowed only at the root of a rule');
      continue;
    }
    if (key === '$ref') {
      walk.refs.push({ target: refTarget(value, here), at: here });
      copy[key] = value;
    } else if ((DEFINITIONS as readonly string[]).includes(key)) {
      if (!root) refuse(here, `\`${key}\` is allowed only at the root of a rule`);
      copy[key] = walkMap(value, here, walk);
    } else if (SCHEMA_VALUED.has(key)) copy[key] = walkSchema(value, here, walk);
    else if (SCHEMA_LISTS.has(key) || (key === 'items' && Array.isArray(value))) {
      if (!Array.isArray(value)) refuse(here, 'must be a list of schemas');
      copy[key] = (value as unknown[]).map((item, i) => walkSchema(item, `${here}/${i}`, walk));
    } else if (key === 'items') copy[key] = walkSchema(value, here, walk);
    else if (SCHEMA_MAPS.has(key)) {
      if (key === 'patternProperties' && isObject(value)) {
        for (const name of Object.keys(value)) {
          const problem = re2Problem(name);
          if (problem) refuse(`${here}/${pointerSegment(name)}`, problem);
        }
      }
      copy[key] = walkMap(value, here, walk);
    } else if (key === 'dependencies') {
      if (!isObject(value)) refuse(here, 'must map names to schemas or to lists of names');
      copy[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, dependency]) => [name, Array.isArray(dependency) ? dependency : walkSchema(dependency, `${here}/${pointerSegment(name)}`, walk)]));
    } else if (DATA_VALUED.has(key)) copy[key] = value;
    else if (PLAIN.has(key)) {
      if (key === 'pattern' && typeof value === 'string') {
        const problem = re2Problem(value);
        if (problem) refuse(here, problem);
      }
      if (key === 'format' && typeof value === 'string' && !FORMAT_NAMES.includes(value)) refuse(here, `format ${JSON.stringify(value.slice(0, 60))} is not one a rule may use (${FORMAT_NAMES.join(', ')})`);
      copy[key] = value;
    } else refuse(here, `unknown keyword ${JSON.stringify(key.slice(0, 60))}`);
  }
  if (walk.draft === 'draft-04') draft04Bounds(copy);
  return copy;
}

function walkMap(value: unknown, at: string, walk: Walk): Record<string, unknown> {
  if (!isObject(value)) return refuse(at, 'must map names to schemas');
  const copy: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(value)) copy[name] = walkSchema(schema, `${at}/${pointerSegment(name)}`, walk);
  return copy;
}

/** Every schema directly inside a node (references not followed; definitions not entered). */
function childSchemas(node: unknown): unknown[] {
  if (!isObject(node)) return [];
  const children: unknown[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (SCHEMA_VALUED.has(key) || (key === 'items' && !Array.isArray(value))) children.push(value);
    else if (SCHEMA_LISTS.has(key) || (key === 'items' && Array.isArray(value))) children.push(...(value as unknown[]));
    else if (SCHEMA_MAPS.has(key)) children.push(...Object.values(value as Record<string, unknown>));
    else if (key === 'dependencies') children.push(...Object.values(value as Record<string, unknown>).filter((dependency) => !Array.isArray(dependency)));
  }
  return children;
}

interface Cost {
  nodes: number;
  depth: number;
}

/**
 * The schema's size and depth with every `$ref` expanded, each definition's memoised so the count
 * is linear in the schema's text; a reference that reaches itself again is a cycle, refused.
 */
function expandedCost(schema: Record<string, unknown>, refsAt: ReadonlyMap<string, string>): Cost {
  const memo = new Map<string, Cost>();
  const open: string[] = [];
  const definitionOf = (target: string): unknown => {
    const [section, name] = [target.slice(0, target.indexOf('/')), target.slice(target.indexOf('/') + 1)];
    const definitions = schema[section];
    return isObject(definitions) && Object.hasOwn(definitions, name) ? definitions[name] : undefined;
  };
  const costOfDefinition = (target: string): Cost => {
    const known = memo.get(target);
    if (known) return known;
    if (open.includes(target)) refuse(refsAt.get(target) ?? '', `\`$ref\` cycle: ${[...open.slice(open.indexOf(target)), target].map((t) => `#/${t}`).join(' → ')} (references must not reach themselves)`);
    open.push(target);
    const cost = costOf(definitionOf(target));
    open.pop();
    memo.set(target, cost);
    return cost;
  };
  const costOf = (node: unknown): Cost => {
    let nodes = 1;
    let depth = 0;
    for (const child of childSchemas(node)) {
      const cost = costOf(child);
      nodes += cost.nodes;
      depth = Math.max(depth, cost.depth);
    }
    if (isObject(node) && typeof node.$ref === 'string') {
      const cost = costOfDefinition(refTarget(node.$ref, ''));
      nodes += cost.nodes;
      depth = Math.max(depth, cost.depth);
    }
    // Past the bounds the count stops growing: the answer is already "refused", and the numbers stay small.
    return { nodes: Math.min(nodes, JSON_SCHEMA_BOUNDS.maxExpandedNodes + 1), depth: Math.min(depth + 1, JSON_SCHEMA_BOUNDS.maxExpandedDepth + 1) };
  };
  return costOf(schema);
}

/**
 * A rule's schema checked against the closed vocabulary and the bounds, and copied for the
 * validator; or the first problem, where it is.
 */
export function checkVocabulary(jsonSchema: unknown): CheckedSchema {
  if (!isObject(jsonSchema)) return { ok: false, problem: { path: '', rule: 'must be a JSON Schema object' } };
  const draft = draftOf(jsonSchema.$schema);
  if (!draft) return { ok: false, problem: { path: '/$schema', rule: `must name JSON Schema draft-04, draft-06, draft-07, 2019-09 or 2020-12 (got ${JSON.stringify(String(jsonSchema.$schema)).slice(0, 120)})` } };
  try {
    const walk: Walk = { draft, refs: [] };
    const schema = walkSchema(jsonSchema, '', walk, true) as Record<string, unknown>;
    const refsAt = new Map<string, string>();
    for (const { target, at } of walk.refs) {
      const [section, name] = [target.slice(0, target.indexOf('/')), target.slice(target.indexOf('/') + 1)];
      const definitions = schema[section];
      if (!isObject(definitions) || !Object.hasOwn(definitions, name)) refuse(at, `\`$ref\` points at no definition: #/${target}`);
      if (!refsAt.has(target)) refsAt.set(target, at);
    }
    const cost = expandedCost(schema, refsAt);
    if (cost.nodes > JSON_SCHEMA_BOUNDS.maxExpandedNodes) refuse('', `expands to more than ${JSON_SCHEMA_BOUNDS.maxExpandedNodes} schema nodes with its references followed (each evaluation would visit them all)`);
    if (cost.depth > JSON_SCHEMA_BOUNDS.maxExpandedDepth) refuse('', `nests more than ${JSON_SCHEMA_BOUNDS.maxExpandedDepth} schemas deep with its references followed`);
    return { ok: true, draft: draft === 'draft-04' || draft === 'draft-06' ? 'draft-07' : draft, schema };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, problem: err.problem };
    // The walk recurses once per level of the schema; a request's JSON is at most 64 deep, so this is a guard only.
    if (err instanceof RangeError) return { ok: false, problem: { path: '', rule: 'is nested too deeply to check' } };
    throw err;
  }
}
