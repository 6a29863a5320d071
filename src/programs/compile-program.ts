import { parseFql, type FqlCondition } from '../rules/fql';
import { parseFqlProperty, type FqlProperty } from '../rules/fql-property';
import { FQL_PROPERTY_BOUNDS } from './bounds';
import { mappingDataRule } from './mapping';
import { renderFailure } from '../mappings/render-check';
import { unknownLiquidFilterIn } from '../mappings/liquid-filters';
import { compileJsonSchema, type CompiledSchema } from './json-schema';
import { re2Problem, re2Search } from './re2';
import { checkFunctionCode } from '../functions/check-code';
import type { FunctionKind } from '../functions/handlers';

/**
 * The one boundary every program a user writes passes when it is saved: tracking-plan rules (JSON
 * Schema), conditions (FQL: destination filters, transformations, mapping triggers, replays), a transformation's computed property (one FQL case function), patterns (RE2) and
 * mapping directives with their Liquid templates. Each language has a closed vocabulary and a
 * stated cost per evaluation (bounds.ts, docs/api.md "User programs"); what comes back is compiled
 * once, cannot stall or throw outside its caller, and touches no shared state. A refusal names
 * the field inside the program and the rule it breaks; the caller puts its own field in front.
 *
 * Function code passes here too (`compileFunctionCode`), asynchronously: its engine, QuickJS, loads
 * as WebAssembly. A new language arrives as one more case, with its bounds in bounds.ts, and so
 * arrives bounded.
 */

export interface ProgramError {
  /** Where inside the program: a JSON Pointer (JSON Schema, mapping data), '' for the program as a whole. */
  field: string;
  /** The rule it breaks, in words. */
  rule: string;
  /** FQL: the column (1-based) and the rule's code (`unexpected-token`, `too-deep`, …) the filters API answers. */
  column?: number;
  code?: string;
}

export type Compiled<P> = { ok: true; program: P } | { ok: false; error: ProgramError };

/** What each language is written as, and what it compiles to. */
export interface ProgramLanguages {
  'json-schema': { source: unknown; program: CompiledSchema };
  fql: { source: string; program: FqlCondition };
  /** A transformation's computed property (`fqlDefinedProperties[].fql`): one case function of a field or a string. */
  'fql-property': { source: string; program: FqlProperty };
  re2: { source: string; program: { test: (text: string) => boolean } };
  /** Mapping-kit directives (`@path`, `@template`, `@if`, `@liquid`…), checked by rendering them for each type their trigger can match. */
  mapping: { source: { data: Record<string, unknown>; trigger: FqlCondition }; program: Record<string, unknown> };
}
export type ProgramLanguage = keyof ProgramLanguages;

export interface CompileOptions {
  /** Told once when a compiled program breaks at evaluation (it is then answered as broken, never as a pass). */
  broken?: (reason: string) => void;
}

type Compiler<L extends ProgramLanguage> = (source: ProgramLanguages[L]['source'], options: CompileOptions) => Compiled<ProgramLanguages[L]['program']>;

const COMPILERS: { [L in ProgramLanguage]: Compiler<L> } = {
  'json-schema': (source, { broken }) => {
    const compiled = compileJsonSchema(source, broken);
    return compiled.ok ? compiled : { ok: false, error: { field: compiled.problem.path, rule: compiled.problem.rule } };
  },
  fql: (source) => {
    const parsed = parseFql(source);
    return parsed.ok ? { ok: true, program: parsed.condition } : { ok: false, error: { field: '', rule: parsed.error.message, column: parsed.error.column, code: parsed.error.rule } };
  },
  'fql-property': (source) => {
    if (source.length > FQL_PROPERTY_BOUNDS.maxExpressionLength) return { ok: false, error: { field: '', rule: `is longer than ${FQL_PROPERTY_BOUNDS.maxExpressionLength} characters` } };
    const parsed = parseFqlProperty(source);
    return parsed.ok ? { ok: true, program: parsed.property } : { ok: false, error: { field: '', rule: parsed.rule, column: parsed.column } };
  },
  re2: (source) => {
    const problem = re2Problem(source);
    return problem === undefined ? { ok: true, program: re2Search(source) } : { ok: false, error: { field: '', rule: problem } };
  },
  mapping: ({ data, trigger }) => {
    const rule = mappingDataRule(data) ?? unknownFilterRule(data) ?? renderFailure(data, trigger);
    return rule === undefined ? { ok: true, program: data } : { ok: false, error: { field: '', rule } };
  },
};

/** An `@liquid` template naming a filter Liquid does not have, which the kit would silently skip. */
function unknownFilterRule(data: unknown): string | undefined {
  const found = unknownLiquidFilterIn(data);
  return found && `${found.pointer}: @liquid uses the unknown filter ${JSON.stringify(found.filter)} (the kit would skip it and send the value unfiltered)`;
}

/** A user program compiled at save, or the first reason it cannot be. Never throws for any source. */
export function compileProgram<L extends ProgramLanguage>(language: L, source: ProgramLanguages[L]['source'], options: CompileOptions = {}): Compiled<ProgramLanguages[L]['program']> {
  try {
    return (COMPILERS[language] as Compiler<L>)(source, options);
  } catch (err) {
    // Every compiler answers its refusals as values; this is the guard that keeps one that
    // throws (a stack running out on a pathological program) a 400, never a 500 or a crash.
    return { ok: false, error: { field: '', rule: err instanceof RangeError ? 'is nested too deeply to compile' : `could not be compiled (${err instanceof Error ? err.name : typeof err})` } };
  }
}

/**
 * Function code compiled at save (functions/check-code.ts): it compiles in QuickJS and defines a
 * handler its kind calls; the refusal's rule says where (line and column) and what. Never throws.
 */
export async function compileFunctionCode(code: string, kind: FunctionKind): Promise<Compiled<{ handlers: string[] }>> {
  try {
    const check = await checkFunctionCode(code, kind);
    return check.ok ? { ok: true, program: { handlers: check.handlers } } : { ok: false, error: { field: '', rule: check.message, ...(check.column !== undefined && { column: check.column }) } };
  } catch (err) {
    return { ok: false, error: { field: '', rule: `could not be compiled (${err instanceof Error ? err.name : typeof err})` } };
  }
}
