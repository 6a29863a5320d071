import { lexFql, type FqlError, type FqlErrorRule, type FqlToken } from './fql-lexer';
import { pathRule } from './safe-path';

export type { FqlError, FqlErrorRule } from './fql-lexer';

/**
 * Segment's FQL compiled into the intermediate representation @segment/tsub evaluates (its
 * dist/matchers.js): a field is its dot path ("properties.email"), a literal `{value}`, an operation
 * an array headed by its operator (`["!", ["=", "event", {"value": "X"}]]`).
 */
export type FqlIr = string | { value: unknown } | FqlIr[];

/**
 * A parsed condition. `all` is the Public API's "match every message" (`"if": "all"` in Segment's
 * examples). In the IR every field is a placeholder, `fieldKey(n)`, for `fields[n]` (its path, one
 * name per segment): conditionMatches hands tsub only those values, with FQL's null for a missing
 * field (tsub reads a missing path as undefined, so `length(userId) < 1` would be false without a
 * userId) and with a list that `in` reads wrapped (`asList`); an escaped "." in a name works too.
 */
export type FqlCondition = { kind: 'all' } | { kind: 'fql'; ir: FqlIr; fields: FqlField[]; /** tsub takes the IR as JSON. */ irJson: string };

export interface FqlField {
  path: string[];
  /** Right of `in`: tsub reads each element of the list as a path or a `{value}`, so it is wrapped. */
  asList: boolean;
}

export type FqlParseResult = { ok: true; condition: FqlCondition } | { ok: false; error: FqlError };

/** The top-level key under which tsub finds the n-th field of a condition. */
export function fieldKey(n: number): string {
  return `f${n}`;
}

/** The IR with each placeholder replaced by its field's dotted path, as Segment would print it (all for all). */
export function irWithFieldNames(condition: FqlCondition): FqlIr {
  if (condition.kind === 'all') return 'all';
  const names = new Map(condition.fields.map((field, n) => [fieldKey(n), field.path.join('.')]));
  const rename = (ir: FqlIr): FqlIr => (typeof ir === 'string' ? (names.get(ir) ?? ir) : Array.isArray(ir) ? ir.map(rename) : ir);
  return rename(condition.ir);
}

// Functions tsub evaluates, with their argument counts. Segment's FQL also has uppercase,
// snakecase, kebabcase, titlecase, bool, string and number: tsub cannot evaluate them, so they are
// refused when the filter is saved rather than silently false on every message.
const FUNCTIONS: Record<string, number> = { contains: 2, match: 2, length: 1, typeof: 1, lowercase: 1 };
const SEGMENT_ONLY_FUNCTIONS = new Set(['uppercase', 'snakecase', 'kebabcase', 'titlecase', 'bool', 'string', 'number']);
const KEYWORDS = new Set(['and', 'or', 'in', 'true', 'false', 'null']);
const COMPARISONS = new Set(['=', '!=', '<', '<=', '>', '>=']);

/**
 * How deep `(` and `!` may nest. The parser recurses about six frames per
 * level, so without a limit the depth that parses depended on the stack and on JIT warmth: a
 * condition a warm process saved failed every cold one. 64 is far beyond any hand-written
 * condition and far below any stack; the same text answers the same on every process.
 */
export const MAX_FQL_NESTING = 64;

/** What a parsed operand is, so the rules tsub imposes (functions take fields or literals) can be checked. */
type Operand =
  | { kind: 'field'; ir: string }
  | { kind: 'literal'; value: unknown }
  | { kind: 'list'; values: unknown[] }
  | { kind: 'function'; name: string; ir: FqlIr[]; args: Operand[] }
  | { kind: 'boolean'; ir: FqlIr };

class FqlSyntaxError extends Error {
  constructor(readonly detail: FqlError) {
    super(detail.message);
  }
}

export function parseFql(source: string): FqlParseResult {
  if (source.trim() === 'all') return { ok: true, condition: { kind: 'all' } };
  if (source.trim() === '') return { ok: false, error: { column: 1, rule: 'empty', message: 'the condition is empty' } };
  const lexed = lexFql(source);
  if (!lexed.ok) return lexed;
  try {
    const parser = new Parser(lexed.tokens);
    const ir = parser.parseCondition();
    return { ok: true, condition: { kind: 'fql', ir, fields: parser.fields, irJson: JSON.stringify(ir) } };
  } catch (error) {
    if (error instanceof FqlSyntaxError) return { ok: false, error: error.detail };
    // The nesting limit keeps the parser far from the stack's end; should a stack still run out
    // (a caller already deep), the condition is refused, never a 500 or a crash of ingestion.
    if (error instanceof RangeError) return { ok: false, error: { column: 1, rule: 'too-deep', message: 'the condition is nested too deeply to parse' } };
    throw error;
  }
}

class Parser {
  private at = 0;
  /** `(` and `!` levels open around the token being read. */
  private depth = 0;
  readonly fields: FqlField[] = [];

  constructor(private readonly tokens: FqlToken[]) {}

  parseCondition(): FqlIr {
    const ir = this.parseOr();
    const next = this.peek();
    if (next.kind !== 'end') this.fail(next, 'unexpected-token', `expected "and", "or" or the end, got ${describe(next)}`);
    return ir;
  }

  private parseOr(): FqlIr {
    return this.parseChain('or', () => this.parseAnd());
  }

  private parseAnd(): FqlIr {
    return this.parseChain('and', () => this.parseUnary());
  }

  /** `a and b and c` as one n-ary `["and", a, b, c]`, as tsub takes it ("and" binds tighter than "or"). */
  private parseChain(word: 'and' | 'or', operand: () => FqlIr): FqlIr {
    const operands = [operand()];
    while (this.isKeyword(word)) {
      this.at++;
      operands.push(operand());
    }
    return operands.length === 1 ? operands[0] : [word, ...operands];
  }

  private parseUnary(): FqlIr {
    const next = this.peek();
    if (next.kind === 'operator' && next.text === '!') {
      this.at++;
      return this.nested(next, () => ['!', this.parseUnary()]);
    }
    return this.parseComparison();
  }

  /** Parses one more level of `(` or `!` under the nesting limit. */
  private nested<T>(token: FqlToken, parse: () => T): T {
    if (this.depth >= MAX_FQL_NESTING) this.fail(token, 'too-deep', `"(" and "!" nest at most ${MAX_FQL_NESTING} deep`);
    this.depth++;
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private parseComparison(): FqlIr {
    const left = this.parseOperand();
    const next = this.peek();
    if (next.kind === 'operator' && COMPARISONS.has(next.text)) {
      this.at++;
      const right = this.parseOperand();
      return this.compare(next.text, left, right, next);
    }
    if (this.isKeyword('in')) {
      this.at++;
      return ['in', this.scalarIr(left, next), this.parseInList()];
    }
    return irOf(left);
  }

  private compare(operator: string, left: Operand, right: Operand, token: FqlToken): FqlIr {
    if (left.kind === 'list' || right.kind === 'list') {
      if (operator !== '=' && operator !== '!=') this.fail(token, 'unsupported-argument', `${operator} compares numbers, not lists`);
    }
    // `typeof()` answers in FQL's type names; tsub's answers in JavaScript's, so the comparison
    // with a type name is rewritten into what tsub can check.
    const typeOf = left.kind === 'function' && left.name === 'typeof' ? { call: left, other: right } : right.kind === 'function' && right.name === 'typeof' ? { call: right, other: left } : undefined;
    if (typeOf) {
      if ((operator !== '=' && operator !== '!=') || typeOf.other.kind !== 'literal' || typeof typeOf.other.value !== 'string') {
        this.fail(token, 'unsupported-argument', 'typeof() can only be compared with = or != to a type name: "string", "number", "bool", "list" or "null"');
      }
      const check = typeCheck(typeOf.call.ir[1], String((typeOf.other as { value: string }).value));
      if (!check) this.fail(token, 'unsupported-argument', 'typeof() returns one of "string", "number", "bool", "list" or "null"');
      return operator === '=' ? check : ['!', check];
    }
    return [operator, irOf(left), irOf(right)];
  }

  private parseInList(): FqlIr {
    const next = this.peek();
    if (next.kind === 'punct' && next.text === '[') {
      const list = this.parseOperand();
      return (list as { values: unknown[] }).values.map((value) => ({ value }));
    }
    const after = this.tokens[this.at + 1];
    if (next.kind !== 'ident' || KEYWORDS.has(next.text) || (after.kind === 'punct' && after.text === '(')) {
      this.fail(next, 'unsupported-argument', '"in" needs a list like [\'a\', \'b\'] or a field holding a list');
    }
    this.at++;
    return this.placeholder({ path: this.parseFieldPath(next), asList: true });
  }

  private parseOperand(): Operand {
    const token = this.next();
    if (token.kind === 'punct' && token.text === '(') {
      return this.nested(token, () => {
        const ir = this.parseOr();
        this.expect(')');
        return { kind: 'boolean', ir };
      });
    }
    if (token.kind === 'punct' && token.text === '[') return this.parseList();
    if (token.kind === 'string' || token.kind === 'number') return { kind: 'literal', value: token.value };
    if (token.kind === 'operator' && token.text === '!') return this.nested(token, () => ({ kind: 'boolean', ir: ['!', irOf(this.parseOperand())] }));
    if (token.kind !== 'ident') return this.fail(token, 'unexpected-token', `expected a field, a value or a function, got ${describe(token)}`);
    if (token.text === 'true' || token.text === 'false') return { kind: 'literal', value: token.text === 'true' };
    if (token.text === 'null') return { kind: 'literal', value: null };
    if (KEYWORDS.has(token.text)) return this.fail(token, 'unexpected-token', `expected a field, a value or a function, got "${token.text}"`);
    const after = this.peek();
    if (after.kind === 'punct' && after.text === '(') return this.parseCall(token);
    return this.parseField(token);
  }

  private parseCall(name: Extract<FqlToken, { kind: 'ident' }>): Operand {
    const arity = FUNCTIONS[name.text];
    if (arity === undefined) {
      const why = SEGMENT_ONLY_FUNCTIONS.has(name.text) ? 'is in Segment\'s FQL but @segment/tsub, which evaluates filters, cannot run it' : 'is not an FQL function';
      this.fail(name, 'unknown-function', `${name.text}() ${why}`);
    }
    this.expect('(');
    const args: Operand[] = [];
    if (!this.isPunct(')')) {
      for (;;) {
        const start = this.peek();
        const arg = this.parseOperand();
        // tsub reads a function's arguments as fields or values, never as nested operations.
        if (arg.kind !== 'field' && arg.kind !== 'literal') this.fail(start, 'unsupported-argument', `${name.text}() takes fields and values, not ${arg.kind === 'list' ? 'lists' : 'expressions'}`);
        args.push(arg);
        if (!this.isPunct(',')) break;
        this.at++;
      }
    }
    this.expect(')');
    if (args.length !== arity) this.fail(name, 'wrong-argument-count', `${name.text}() takes ${arity} argument${arity === 1 ? '' : 's'}, got ${args.length}`);
    return { kind: 'function', name: name.text, args, ir: [name.text, ...args.map(irOf)] };
  }

  private parseField(first: Extract<FqlToken, { kind: 'ident' }>): Operand {
    return { kind: 'field', ir: this.placeholder({ path: this.parseFieldPath(first), asList: false }) };
  }

  private parseFieldPath(first: Extract<FqlToken, { kind: 'ident' }>): string[] {
    const segments = [first];
    while (this.isPunct('.')) {
      this.at++;
      const segment = this.next();
      if (segment.kind !== 'ident') this.fail(segment, 'unexpected-token', `expected a field name after ".", got ${describe(segment)}`);
      segments.push(segment);
    }
    const path = segments.map((segment) => segment.text);
    const forbidden = pathRule(path, 'field');
    if (forbidden) this.fail(first, 'forbidden-segment', forbidden);
    return path;
  }

  private placeholder(field: FqlField): string {
    const same = this.fields.findIndex((known) => known.asList === field.asList && known.path.join('\0') === field.path.join('\0'));
    if (same >= 0) return fieldKey(same);
    this.fields.push(field);
    return fieldKey(this.fields.length - 1);
  }

  private parseList(): Operand {
    const values: unknown[] = [];
    if (!this.isPunct(']')) {
      for (;;) {
        const token = this.next();
        if (token.kind === 'string' || token.kind === 'number') values.push(token.value);
        else if (token.kind === 'ident' && (token.text === 'true' || token.text === 'false')) values.push(token.text === 'true');
        else if (token.kind === 'ident' && token.text === 'null') values.push(null);
        else this.fail(token, 'unexpected-token', `a list holds strings, numbers, booleans and null, got ${describe(token)}`);
        if (!this.isPunct(',')) break;
        this.at++;
      }
    }
    this.expect(']');
    return { kind: 'list', values };
  }

  private scalarIr(operand: Operand, token: FqlToken): FqlIr {
    if (operand.kind === 'list' || operand.kind === 'boolean') this.fail(token, 'unsupported-argument', 'the left of "in" is a field or a value');
    return irOf(operand);
  }

  private peek(): FqlToken {
    return this.tokens[this.at];
  }

  private next(): FqlToken {
    const token = this.tokens[this.at];
    if (token.kind !== 'end') this.at++;
    return token;
  }

  private isKeyword(word: string): boolean {
    const token = this.peek();
    return token.kind === 'ident' && token.text === word;
  }

  private isPunct(text: string): boolean {
    const token = this.peek();
    return token.kind === 'punct' && token.text === text;
  }

  private expect(text: string): void {
    const token = this.next();
    if (token.kind !== 'punct' || token.text !== text) this.fail(token, 'unexpected-token', `expected "${text}", got ${describe(token)}`);
  }

  private fail(token: FqlToken, rule: FqlErrorRule, message: string): never {
    throw new FqlSyntaxError({ column: token.column, rule, message });
  }
}

function irOf(operand: Operand): FqlIr {
  switch (operand.kind) {
    case 'field':
      return operand.ir;
    case 'literal':
      return { value: operand.value };
    case 'list':
      return { value: operand.values };
    case 'function':
      return operand.ir;
    case 'boolean':
      return operand.ir;
  }
}

/** FQL's `typeof(x) = name` in terms tsub evaluates (its typeof is JavaScript's; a missing field is undefined). */
function typeCheck(value: FqlIr, name: string): FqlIr | undefined {
  switch (name) {
    case 'string':
    case 'number':
      return ['=', ['typeof', value], { value: name }];
    case 'bool':
      return ['=', ['typeof', value], { value: 'boolean' }];
    case 'null':
      return ['=', value, { value: null }];
    case 'list':
      // tsub's length() is NaN for an object and 0 for null, so only an array passes all three.
      return ['and', ['=', ['typeof', value], { value: 'object' }], ['!=', value, { value: null }], ['>=', ['length', value], { value: 0 }]];
    default:
      return undefined;
  }
}

function describe(token: FqlToken): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the condition';
    case 'ident':
      return `"${token.text}"`;
    case 'string':
      return `the string '${token.value}'`;
    case 'number':
      return `the number ${token.value}`;
    default:
      return `"${token.text}"`;
  }
}
