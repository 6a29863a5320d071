/**
 * A mapping's data as the form edits it, and back (pure: no DOM, unit- and property-tested).
 *
 * Every value of Segment's mapping kit (`@segment/actions-core`) becomes one node of the form: an
 * object of plain keys is a list of nested fields, `{"@path": "$."}` is "the whole event", and each
 * directive the kit's validator accepts (`@path`, `@template`, `@liquid`, `@if`, `@case`, `@replace`,
 * `@arrayPath`, `@json`, `@flatten`, `@merge`, `@transform`, `@literal`, `@excludeWhenNull`) has its
 * own fields. What the form has no field for (a directive with an option it does not know, an
 * option of another type, an unknown directive, a `_metadata` key) is one JSON node, kept as written.
 * So JSON → form → JSON gives back the same text, keys in the same order, and form → JSON → form
 * the same form (fields in the order a JavaScript object keeps keys: integer-like ones such as `0`
 * first, as JSON.parse reads them).
 */

/** The whole event, as Segment's default mapping writes it. */
export const WHOLE_EVENT_PATH = '$.';

/** The kinds of node, in the order the form offers them. */
export const NODE_KINDS = [
  'fields',
  'event',
  'path',
  'template',
  'text',
  'value',
  'list',
  'if',
  'case',
  'replace',
  'arrayPath',
  'json',
  'flatten',
  'merge',
  'transform',
  'literal',
  'excludeWhenNull',
  'liquid',
  'raw',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** What the form calls each kind: the directive in parentheses, as Segment's docs name it. */
export const NODE_KIND_LABELS: Record<NodeKind, string> = {
  fields: 'fields (an object)',
  event: 'the whole event',
  path: 'a field of the event (@path)',
  template: 'a template (@template)',
  text: 'text',
  value: 'a number, true, false or null',
  list: 'a list',
  if: 'if it exists (@if)',
  case: 'upper or lower case (@case)',
  replace: 'replace text (@replace)',
  arrayPath: 'each item of a list (@arrayPath)',
  json: 'JSON encode or decode (@json)',
  flatten: 'flatten an object (@flatten)',
  merge: 'merge objects (@merge)',
  transform: 'transform the event first (@transform)',
  literal: 'as written (@literal)',
  excludeWhenNull: 'left out when null (@excludeWhenNull)',
  liquid: 'a Liquid template (@liquid)',
  raw: 'JSON',
};

export interface FieldEntry {
  key: string;
  node: FieldNode;
}

/**
 * A directive's options keep the order they came in (`order`, only when it is not the form's own):
 * the JSON the form gives back is then the same text.
 */
interface Ordered {
  order?: string[];
}

export type FieldNode =
  | { kind: 'fields'; fields: FieldEntry[] }
  | { kind: 'event' }
  | { kind: 'path' | 'template' | 'liquid' | 'text'; text: string }
  /** A number, true, false or null, as JSON text. */
  | { kind: 'value'; json: string }
  | { kind: 'list'; items: FieldNode[] }
  | ({ kind: 'if'; test: 'exists' | 'blank'; condition: FieldNode; then?: FieldNode; else?: FieldNode } & Ordered)
  | ({ kind: 'case'; operator: string; value: FieldNode } & Ordered)
  | ({ kind: 'replace'; pattern: string; replacement?: string; pattern2?: string; replacement2?: string; ignorecase?: boolean; global?: boolean; value: FieldNode } & Ordered)
  | { kind: 'arrayPath'; root: string; shape?: FieldNode }
  | ({ kind: 'json'; mode: string; value: FieldNode } & Ordered)
  | ({ kind: 'flatten'; separator: string; omitArrays?: boolean; value: FieldNode } & Ordered)
  | ({ kind: 'merge'; direction: string; objects: FieldNode[] } & Ordered)
  | ({ kind: 'transform'; apply: FieldNode; mapping: FieldNode } & Ordered)
  | { kind: 'literal' | 'excludeWhenNull'; value: FieldNode }
  /** Anything the form has no fields for, as JSON text. */
  | { kind: 'raw'; json: string };

export type NodeOf<K extends NodeKind> = Extract<FieldNode, { kind: K }>;

/** The options of each directive the form has fields for, in the form's order, and which of them may be left out. */
const OPTIONS = {
  if: { keys: ['exists', 'blank', 'then', 'else'], optional: ['then', 'else'] },
  case: { keys: ['operator', 'value'], optional: [] },
  replace: { keys: ['pattern', 'replacement', 'pattern2', 'replacement2', 'ignorecase', 'global', 'value'], optional: ['replacement', 'pattern2', 'replacement2', 'ignorecase', 'global'] },
  json: { keys: ['value', 'mode'], optional: [] },
  flatten: { keys: ['value', 'separator', 'omitArrays'], optional: ['omitArrays'] },
  merge: { keys: ['direction', 'objects'], optional: [] },
  transform: { keys: ['apply', 'mapping'], optional: [] },
} as const;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isScalar = (value: unknown) => value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0));

const raw = (value: unknown): FieldNode => ({ kind: 'raw', json: JSON.stringify(value) ?? 'null' });

/** Own keys as the form writes them: built with defineProperty so a `__proto__` key stays a key. */
function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** The keys of a directive's options, when every one is known and every required one is there; the order kept when it is not the form's. */
function knownOptions(options: unknown, known: { keys: readonly string[]; optional: readonly string[] }, required = known.keys.filter((k) => !known.optional.includes(k))): Ordered | undefined {
  if (!isRecord(options)) return undefined;
  const keys = Object.keys(options);
  if (keys.some((key) => !known.keys.includes(key)) || required.some((key) => !keys.includes(key))) return undefined;
  const canonical = known.keys.filter((key) => keys.includes(key));
  return canonical.every((key, i) => key === keys[i]) ? {} : { order: keys };
}

/** The one directive of a value (`{"@x": …}` alone), if it is one. */
function directiveOf(value: Record<string, unknown>): [string, unknown] | undefined {
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0].startsWith('@') ? [keys[0], value[keys[0]]] : undefined;
}

/** A directive as a node, or undefined when the form has no fields for it as written. */
function directiveNode(name: string, options: unknown): FieldNode | undefined {
  // The options as a record, and their order, when every key is one the form knows.
  const o = options as Record<string, unknown>;
  const known = (shape: { keys: readonly string[]; optional: readonly string[] }) => knownOptions(options, shape);
  switch (name) {
    case '@path':
      if (!isString(options)) return undefined;
      return options === WHOLE_EVENT_PATH ? { kind: 'event' } : { kind: 'path', text: options };
    case '@template':
    case '@liquid':
      return isString(options) ? { kind: name === '@template' ? 'template' : 'liquid', text: options } : undefined;
    case '@literal':
    case '@excludeWhenNull':
      return { kind: name === '@literal' ? 'literal' : 'excludeWhenNull', value: nodeOf(options) };
    case '@arrayPath': {
      if (!Array.isArray(options) || options.length < 1 || options.length > 2 || !isString(options[0])) return undefined;
      return options.length === 1 ? { kind: 'arrayPath', root: options[0] } : { kind: 'arrayPath', root: options[0], shape: nodeOf(options[1]) };
    }
    case '@if': {
      // Exactly one of `exists` and `blank`: the test the kit runs.
      const test = isRecord(o) && ('exists' in o) !== ('blank' in o) ? ('exists' in o ? 'exists' : 'blank') : undefined;
      const ordered = test && knownOptions(o, OPTIONS.if, [test]);
      if (!test || !ordered) return undefined;
      return { kind: 'if', test, condition: nodeOf(o[test]), ...('then' in o && { then: nodeOf(o.then) }), ...('else' in o && { else: nodeOf(o.else) }), ...ordered };
    }
    case '@case': {
      const ordered = known(OPTIONS.case);
      return ordered && isString(o.operator) ? { kind: 'case', operator: o.operator, value: nodeOf(o.value), ...ordered } : undefined;
    }
    case '@replace': {
      const ordered = known(OPTIONS.replace);
      const strings = ['pattern', 'replacement', 'pattern2', 'replacement2'] as const;
      if (!ordered || !isString(o.pattern) || strings.some((k) => k in o && !isString(o[k])) || (['ignorecase', 'global'] as const).some((k) => k in o && !isBoolean(o[k]))) return undefined;
      const present = Object.fromEntries(['replacement', 'pattern2', 'replacement2', 'ignorecase', 'global'].filter((k) => k in o).map((k) => [k, o[k]])) as Pick<NodeOf<'replace'>, 'replacement' | 'pattern2' | 'replacement2' | 'ignorecase' | 'global'>;
      return { kind: 'replace', pattern: o.pattern, ...present, value: nodeOf(o.value), ...ordered };
    }
    case '@json': {
      const ordered = known(OPTIONS.json);
      return ordered && isString(o.mode) ? { kind: 'json', mode: o.mode, value: nodeOf(o.value), ...ordered } : undefined;
    }
    case '@flatten': {
      const ordered = known(OPTIONS.flatten);
      if (!ordered || !isString(o.separator) || ('omitArrays' in o && !isBoolean(o.omitArrays))) return undefined;
      return { kind: 'flatten', separator: o.separator, ...('omitArrays' in o && { omitArrays: o.omitArrays as boolean }), value: nodeOf(o.value), ...ordered };
    }
    case '@merge': {
      const ordered = known(OPTIONS.merge);
      return ordered && isString(o.direction) && Array.isArray(o.objects) ? { kind: 'merge', direction: o.direction, objects: o.objects.map(nodeOf), ...ordered } : undefined;
    }
    case '@transform': {
      const ordered = known(OPTIONS.transform);
      return ordered ? { kind: 'transform', apply: nodeOf(o.apply), mapping: nodeOf(o.mapping), ...ordered } : undefined;
    }
    default:
      return undefined;
  }
}

/** A value of a mapping's data as the form shows it: the simplest node that says it exactly. */
export function nodeOf(value: unknown): FieldNode {
  if (typeof value === 'string') return { kind: 'text', text: value };
  if (isScalar(value)) return { kind: 'value', json: JSON.stringify(value) };
  if (Array.isArray(value)) return { kind: 'list', items: value.map(nodeOf) };
  if (!isRecord(value)) return raw(value);
  const keys = Object.keys(value);
  if (keys.some((key) => key.startsWith('@'))) {
    const directive = directiveOf(value);
    return (directive && directiveNode(directive[0], directive[1])) ?? raw(value);
  }
  // A blank key is the form's "no field yet": an object that has one is kept as JSON.
  if (keys.includes('')) return raw(value);
  return { kind: 'fields', fields: keys.map((key) => ({ key, node: nodeOf(value[key]) })) };
}

/** Where a node sits, for an error that names it: `data field "order" → items`. */
const at = (where: string, step: string) => `${where} → ${step}`;

/** A directive's options in the order they came (or the form's), undefined ones left out. */
function options(node: Ordered, known: readonly string[], values: Record<string, unknown>): Record<string, unknown> {
  const order = [...(node.order ?? []).filter((key) => known.includes(key)), ...known.filter((key) => !(node.order ?? []).includes(key))];
  return objectOf(order.filter((key) => values[key] !== undefined).map((key) => [key, values[key]]));
}

/**
 * A node as the mapping holds it; a JSON or value text that does not parse, or two fields with one
 * key, is an error naming where (`where`: `data field "total"`).
 */
export function valueOf(node: FieldNode, where = 'data'): unknown {
  const child = (n: FieldNode | undefined, step: string) => (n === undefined ? undefined : valueOf(n, at(where, step)));
  switch (node.kind) {
    case 'fields': {
      const entries = node.fields.filter((entry) => entry.key !== '');
      const seen = new Set<string>();
      for (const { key } of entries) {
        // The kit reads an `@` key as a directive: the kind picker says which, a key cannot.
        if (key.startsWith('@')) throw new Error(`${where}: the key "${key}" starts with @, which makes it a directive; pick the directive as the value's kind instead`);
        if (seen.has(key)) throw new Error(`${where}: the field "${key}" is there twice; give each field its own key`);
        seen.add(key);
      }
      return objectOf(entries.map(({ key, node: n }) => [key, valueOf(n, where === 'data' ? `data field "${key}"` : at(where, `"${key}"`))]));
    }
    case 'event':
      return { '@path': WHOLE_EVENT_PATH };
    case 'path':
      return { '@path': node.text };
    case 'template':
      return { '@template': node.text };
    case 'liquid':
      return { '@liquid': node.text };
    case 'text':
      return node.text;
    case 'value': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(node.json) as unknown;
      } catch {
        parsed = undefined;
      }
      if (!isScalar(parsed)) throw new Error(`${where}: "${node.json}" is not a number, true, false or null`);
      return parsed;
    }
    case 'list':
      return node.items.map((item, i) => valueOf(item, at(where, `item ${i + 1}`)));
    case 'if':
      return { '@if': options(node, OPTIONS.if.keys, { [node.test]: child(node.condition, node.test), then: child(node.then, 'then'), else: child(node.else, 'else') }) };
    case 'case':
      return { '@case': options(node, OPTIONS.case.keys, { operator: node.operator, value: child(node.value, 'value') }) };
    case 'replace': {
      const { pattern, replacement, pattern2, replacement2, ignorecase, global } = node;
      return { '@replace': options(node, OPTIONS.replace.keys, { pattern, replacement, pattern2, replacement2, ignorecase, global, value: child(node.value, 'value') }) };
    }
    case 'arrayPath':
      return { '@arrayPath': node.shape === undefined ? [node.root] : [node.root, child(node.shape, 'each item')] };
    case 'json':
      return { '@json': options(node, OPTIONS.json.keys, { value: child(node.value, 'value'), mode: node.mode }) };
    case 'flatten':
      return { '@flatten': options(node, OPTIONS.flatten.keys, { value: child(node.value, 'value'), separator: node.separator, omitArrays: node.omitArrays }) };
    case 'merge':
      return { '@merge': options(node, OPTIONS.merge.keys, { direction: node.direction, objects: node.objects.map((o, i) => valueOf(o, at(where, `object ${i + 1}`))) }) };
    case 'transform':
      return { '@transform': options(node, OPTIONS.transform.keys, { apply: child(node.apply, 'apply'), mapping: child(node.mapping, 'mapping') }) };
    case 'literal':
      return { '@literal': child(node.value, 'value') };
    case 'excludeWhenNull':
      return { '@excludeWhenNull': child(node.value, 'value') };
    case 'raw':
      try {
        return JSON.parse(node.json) as unknown;
      } catch (err) {
        throw new Error(`${where}: not JSON (${(err as Error).message})`);
      }
  }
}

/** The texts a node holds, so a change of kind keeps what was typed (a path becomes a template of the same text). */
function textOf(node: FieldNode | undefined): string {
  if (!node) return '';
  if ('text' in node) return node.text;
  if (node.kind === 'event') return WHOLE_EVENT_PATH;
  return '';
}

/** The previous node as JSON text when it has one (a value that does not parse yet starts the JSON empty). */
function rawTextOf(previous: FieldNode | undefined): string {
  try {
    return previous ? (JSON.stringify(valueOf(previous)) ?? 'null') : 'null';
  } catch {
    return 'null';
  }
}

/**
 * A new node of a kind, for the form's kind picker: the previous node's text where the new kind has
 * text, the previous node inside where the new kind wraps a value (`@case`'s value, `@if`'s then…).
 */
export function blankNode(kind: NodeKind, previous?: FieldNode): FieldNode {
  const inner = previous && previous.kind !== kind ? previous : { kind: 'path' as const, text: '$.properties.' };
  switch (kind) {
    case 'fields':
      return { kind, fields: [] };
    case 'event':
      return { kind };
    case 'path':
    case 'template':
    case 'liquid':
    case 'text':
      return { kind, text: textOf(previous) };
    case 'value':
      return { kind, json: '0' };
    case 'list':
      return { kind, items: previous ? [previous] : [] };
    case 'if':
      return { kind, test: 'exists', condition: inner, then: inner };
    case 'case':
      return { kind, operator: 'lower', value: inner };
    case 'replace':
      return { kind, pattern: ' ', replacement: '_', value: inner };
    case 'arrayPath':
      return { kind, root: '$.properties.products', shape: { kind: 'fields', fields: [{ key: 'id', node: { kind: 'path', text: '$.product_id' } }] } };
    case 'json':
      return { kind, mode: 'encode', value: inner };
    case 'flatten':
      return { kind, separator: '.', value: inner };
    case 'merge':
      return { kind, direction: 'right', objects: [inner] };
    case 'transform':
      return { kind, apply: { kind: 'fields', fields: [] }, mapping: inner };
    case 'literal':
    case 'excludeWhenNull':
      return { kind, value: inner };
    case 'raw':
      return { kind, json: rawTextOf(previous) };
  }
}
