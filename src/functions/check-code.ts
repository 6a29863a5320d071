import { parse, type Node } from 'acorn';
import { COMPILE_LIMIT_MS, COMPILE_MEMORY_BYTES, MAX_CODE_LENGTH } from './code-limits';
import { newQuickJSModule } from './quickjs-module';
import { expectedHandlers, type FunctionKind } from './handlers';

/**
 * The check a function's code passes when it is saved, before any version exists: it must compile
 * in the engine that will run it (QuickJS, as a sloppy-mode script), and define at the top level
 * a handler its kind calls. The boundary for user programs calls it (programs/compile-program.ts
 * `compileFunctionCode`); its limits are in the boundary's table (programs/bounds.ts
 * FUNCTION_BOUNDS). Nothing of the code runs here.
 */

export { MAX_CODE_LENGTH } from './code-limits';

export type CodeCheck = { ok: true; handlers: string[] } | { ok: false; message: string; line?: number; column?: number };

/** Names a script binds at its top level: function declarations, var/let/const, and `name = …` (an implicit global). */
export function topLevelNames(code: string): string[] {
  const program = parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true }) as unknown as { body: Node[] };
  const names = new Set<string>();
  const assigned = (target: Node) => {
    const t = target as Node & { name?: string; object?: Node & { name?: string; type: string }; property?: Node & { name?: string }; computed?: boolean };
    if (t.type === 'Identifier' && t.name) names.add(t.name);
    // `this.onTrack = …` and `globalThis.onTrack = …` define a global in a sloppy script too.
    if (t.type === 'MemberExpression' && !t.computed && t.property?.name && (t.object?.type === 'ThisExpression' || t.object?.name === 'globalThis')) names.add(t.property.name);
  };
  for (const statement of program.body) {
    const s = statement as Node & { id?: { name: string }; declarations?: { id: Node }[]; expression?: Node & { left?: Node; expressions?: Node[] } };
    if (s.type === 'FunctionDeclaration' && s.id) names.add(s.id.name);
    if (s.type === 'VariableDeclaration') for (const d of s.declarations ?? []) assigned(d.id);
    if (s.type === 'ExpressionStatement') {
      const expressions = s.expression?.type === 'SequenceExpression' ? (s.expression.expressions ?? []) : [s.expression!];
      for (const e of expressions as (Node & { left?: Node })[]) if (e.type === 'AssignmentExpression' && e.left) assigned(e.left);
    }
  }
  return [...names];
}

/** A syntax error where QuickJS reports it: `message` with 1-based line and column. */
async function compileError(code: string): Promise<{ message: string; line?: number; column?: number } | undefined> {
  // A module of its own per check: compiling leaves nothing behind, and nothing is shared with a run.
  const module = await newQuickJSModule();
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(COMPILE_MEMORY_BYTES);
  const deadline = Date.now() + COMPILE_LIMIT_MS;
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const vm = runtime.newContext();
  const result = vm.evalCode(code, 'function.js', { type: 'global', strict: false, compileOnly: true });
  if (!result.error) {
    result.value.dispose();
    return undefined;
  }
  const error = vm.dump(result.error) as { name?: string; message?: string; stack?: string };
  result.error.dispose();
  const at = /function\.js:(\d+):(\d+)/.exec(error.stack ?? '');
  const message = `${error.name ?? 'SyntaxError'}: ${error.message ?? 'the code does not compile'}`;
  return at ? { message, line: Number(at[1]), column: Number(at[2]) } : { message };
}

export async function checkFunctionCode(code: string, kind: FunctionKind): Promise<CodeCheck> {
  if (code.trim() === '') return { ok: false, message: 'is empty; it must define ' + expectedHandlers(kind).join(', ') };
  if (code.length > MAX_CODE_LENGTH) return { ok: false, message: `is ${code.length} characters, over the limit of ${MAX_CODE_LENGTH}` };
  const compiled = await compileError(code);
  if (compiled) {
    const where = compiled.line ? ` at line ${compiled.line}, column ${compiled.column}` : '';
    return { ok: false, message: `does not compile${where}: ${compiled.message}`, line: compiled.line, column: compiled.column };
  }
  let names: string[];
  try {
    names = topLevelNames(code);
  } catch (err) {
    const e = err as Error & { loc?: { line: number; column: number } };
    const line = e.loc?.line;
    const column = e.loc ? e.loc.column + 1 : undefined;
    return { ok: false, message: `does not compile${line ? ` at line ${line}, column ${column}` : ''}: ${e.message.replace(/ \(\d+:\d+\)$/, '')}`, line, column };
  }
  const expected = expectedHandlers(kind);
  const handlers = expected.filter((name) => names.includes(name));
  if (handlers.length > 0) return { ok: true, handlers };
  if (names.includes('onBatch') && kind !== 'SOURCE') {
    return {
      ok: false,
      message: `defines only onBatch, which Switchyard never calls: each message is delivered by its own workflow, one event at a time. Define one or more of ${expected.join(', ')}`,
    };
  }
  return { ok: false, message: `defines no handler; a ${kind} function must define ${kind === 'SOURCE' ? 'onRequest' : `one or more of ${expected.join(', ')}`} at the top level` };
}
