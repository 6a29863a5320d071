import { pathRule } from '../rules/safe-path';

/**
 * One safe walker for mappings too: every path a mapping's `data` hands Segment's mapping kit
 * (`@path`, `@arrayPath`'s root, `@template`'s `{{…}}` placeholders) checked by the one safe path
 * walker (rules/safe-path.ts) before the kit sees it. The kit's `get` reads inherited properties
 * (`prevObj[key]`), so `"$.constructor.prototype"` would step out of the event. Pure.
 */

/** How deep a mapping's `data` may nest: the kit validates and renders it recursively, and a saved mapping must render on every process. */
export const MAX_MAPPING_NESTING = 64;
/**
 * How deep directives may nest inside directives (`@if` in an `@if`'s `then`, …). The kit's
 * validation and rendering time grows about 1.5× per level of `@if`, `@case`, `@replace`, `@json`:
 * 25 nested `@if`s, a 1.6 KB body, held the API for minutes (found by the hostile-input fuzzer).
 * At 8 the worst measured was tens of milliseconds; Segment's own mappings nest two or three.
 */
export const MAX_DIRECTIVE_NESTING = 8;

// The kit's own split (actions-core get.ts): `.`, `[` before a quote or digit, `]` after one; quotes dropped.
const KIT_PATH_SEPARATOR = /\[(?="|'|\d)|\.|(?<="|'|\d)]+/g;

/** The segments the kit's `get` walks for a path as a mapping writes it (`$.properties["a b"]`). */
export function kitPathSegments(path: string): string[] {
  return path
    .replace('$.', '')
    .split(KIT_PATH_SEPARATOR)
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/'|"/g, ''));
}

/** Where in `data` a rule is broken (`/who/@path`), and the rule; undefined when every path is safe and the nesting within the limit. */
export function mappingPathViolation(data: unknown): { at: string; rule: string } | undefined {
  // Iterative, so the check itself cannot run out of stack on the nesting it refuses.
  const pending: { value: unknown; at: string; depth: number; directives: number }[] = [{ value: data, at: '', depth: 0, directives: 0 }];
  while (pending.length > 0) {
    const { value, at, depth, directives: outer } = pending.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_MAPPING_NESTING) return { at: at || '/', rule: `nests deeper than ${MAX_MAPPING_NESTING} levels` };
    const directives = outer + (Object.keys(value).some((key) => key.startsWith('@')) ? 1 : 0);
    if (directives > MAX_DIRECTIVE_NESTING) return { at: at || '/', rule: `nests directives more than ${MAX_DIRECTIVE_NESTING} deep` };
    const rule = directivePathRule(value);
    if (rule) return { at: `${at}/${rule.directive}`, rule: rule.rule };
    for (const [key, child] of Object.entries(value)) pending.push({ value: child, at: `${at}/${key}`, depth: depth + 1, directives });
  }
  return undefined;
}

function directivePathRule(value: object): { directive: string; rule: string } | undefined {
  const paths: [string, string][] = [];
  const directive = value as Record<string, unknown>;
  if (typeof directive['@path'] === 'string') paths.push(['@path', directive['@path']]);
  const arrayPath = directive['@arrayPath'];
  if (Array.isArray(arrayPath) && typeof arrayPath[0] === 'string') paths.push(['@arrayPath', arrayPath[0]]);
  if (typeof directive['@template'] === 'string') {
    for (const match of directive['@template'].matchAll(/\{\{\{?([^}]+)\}?\}\}/g)) paths.push(['@template', match[1].trim()]);
  }
  for (const [name, path] of paths) {
    const rule = pathRule(kitPathSegments(path), 'path', path);
    if (rule) return { directive: name, rule };
  }
  return undefined;
}
