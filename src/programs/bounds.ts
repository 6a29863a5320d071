import { COMPILE_LIMIT_MS, COMPILE_MEMORY_BYTES, MAX_CODE_LENGTH } from '../functions/code-limits';

/**
 * What one evaluation of a user program may cost, per language: the one table of bounds the
 * boundary (compile-program.ts) holds every saved program to. A program that would need more is
 * refused at save with a 400 naming the bound; a value that would cost more at evaluation is a
 * violation that says why ("too long to check"), never a 500 and never a stall.
 * docs/api.md "User programs" states the same numbers.
 */

/** JSON Schema (tracking-plan rules). */
export const JSON_SCHEMA_BOUNDS = {
  /**
   * Schema nodes counted with every local `$ref` expanded (memoised per definition). An
   * evaluation visits at most this many nodes per value of the message, so a chain of references
   * that doubles at each level is refused long before it costs anything.
   */
  maxExpandedNodes: 10_000,
  /** Schema nesting, with references expanded: the depth of the validator's recursion. */
  maxExpandedDepth: 64,
  /** A string longer than this is not read by `format` or `pattern`: it is a violation, "too long to check". */
  maxCheckedStringLength: 1_024,
  /** `uniqueItems` compares items pairwise only up to this many when they are not all scalars (scalars: one pass). */
  maxUniqueItemsCompared: 64,
} as const;

/** RE2 patterns (JSON Schema `pattern` and `patternProperties`). */
export const RE2_BOUNDS = {
  /**
   * RE2 runs in time linear in the text, times the pattern's compiled size when its DFA gives up:
   * a pattern's program is bounded so that factor is too (`a[ab]{1000}$` is over it).
   */
  maxProgramSize: 1_000,
  /** A pattern's source text. */
  maxPatternLength: 1_000,
} as const;

/** FQL conditions (filters, transformations, mapping triggers, replays): see rules/fql.ts for the parser's own. */
export const FQL_BOUNDS = {
  /** Characters of a condition: it is parsed once at save, evaluated once per message and destination. */
  maxConditionLength: 10_000,
} as const;

/**
 * A transformation's computed property (`fqlDefinedProperties[].fql`): one case function of one
 * field or string, so an evaluation is one string conversion of the value (bounded by the message).
 */
export const FQL_PROPERTY_BOUNDS = {
  maxExpressionLength: 1_000,
} as const;

/**
 * Mapping directives and their Liquid templates: directives nest at most MAX_DIRECTIVE_NESTING deep
 * and data MAX_MAPPING_NESTING (mappings/mapping-paths.ts); a `@liquid` template is at most 1,000
 * characters, parsed within 1,000 ms and rendered within 500 ms with 100 MB of memory, and cannot
 * loop (`for`, `tablerow`, `include`, `render` are disabled): the mapping kit's own Liquid engine
 * (@segment/actions-core mapping-kit/liquid-directive), whose limits are stated here, not changed.
 */
export const MAPPING_BOUNDS = {
  maxLiquidTemplateLength: 1_000,
  liquidParseLimitMs: 1_000,
  liquidRenderLimitMs: 500,
} as const;

/**
 * Function code (destination, insert and source functions): compiled at save in the engine that
 * runs it (QuickJS, as a sloppy-mode script) with nothing of it run, within the compile limits
 * below; each invocation then runs off the worker's event loop in a sandbox thread under
 * FUNCTION_TIMEOUT (default 5 s of wall time, `fetch` included) and FUNCTION_MEMORY_LIMIT, and is
 * ended within about 100 ms past them, inside a long native operation too (the thread is replaced).
 */
export const FUNCTION_BOUNDS = {
  maxCodeLength: MAX_CODE_LENGTH,
  compileLimitMs: COMPILE_LIMIT_MS,
  compileMemoryBytes: COMPILE_MEMORY_BYTES,
} as const;
