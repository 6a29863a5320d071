import fc from 'fast-check';
import { compileProgram } from '../../src/programs/compile-program';
import { JSON_SCHEMA_BOUNDS } from '../../src/programs/bounds';
import { guardedCheck } from '../../src/programs/json-schema';
import { compilePlan } from '../../src/plans/compile-plan';
import { decidePlan } from '../../src/plans/plan-decision';
import { controlsFrom } from '../../src/plans/schema-controls';
import { violationOf } from '../../src/plans/violations';

/**
 * The boundary every user program passes at save (src/programs): the closed vocabulary of
 * JSON Schema rules, their cost bounds, and checks that cannot throw or pass by accident. Each
 * case is a shape an outside review showed breaking the process, a plan, or the event loop.
 * FC_SEED replays the property case; the seed is printed.
 */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4242 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 50);
beforeAll(() => {
  console.log(`user-programs property test: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
});

const schema = (jsonSchema: unknown) => compileProgram('json-schema', jsonSchema);
const refusal = (jsonSchema: unknown) => {
  const compiled = schema(jsonSchema);
  return compiled.ok ? undefined : compiled.error;
};
const ok = (jsonSchema: unknown) => {
  const compiled = schema(jsonSchema);
  if (!compiled.ok) throw new Error(`${compiled.error.field}: ${compiled.error.rule}`);
  return compiled.program;
};
const planned = (properties: Record<string, unknown>) => ({ properties: { properties: { properties } } });

describe('a refused save changes no shared state', () => {
  it.each([
    ['draft-07', 'http://json-schema.org/draft-07/schema#', undefined],
    ['draft-07 without #', 'http://json-schema.org/draft-07/schema', undefined],
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2019-09/schema'],
  ])('a rule whose $id names the %s meta-schema is refused, and a good rule of that draft compiles after it', (_, id, draft) => {
    expect(refusal({ $id: id })).toEqual({ field: '/$id', rule: '`$id` must not name a JSON Schema meta-schema' });
    const good = ok({ ...(draft && { $schema: draft }), ...planned({ total: { type: 'number' } }) });
    expect(good.check({ properties: { total: 1 } })).toEqual([]);
    expect(good.check({ properties: { total: 'x' } })).toHaveLength(1);
  });

  it('takes a draft-04 export as is: its `id` ignored, its boolean exclusiveMaximum read as draft-04 meant it', () => {
    const rule = ok({ $schema: 'http://json-schema.org/draft-04/schema#', id: 'https://schemas.example.com/order.json', ...planned({ total: { type: 'number', maximum: 10, exclusiveMaximum: true } }) });
    expect(rule.check({ properties: { total: 9 } })).toEqual([]);
    expect(rule.check({ properties: { total: 10 } })).toHaveLength(1);
    expect(refusal({ $schema: 'http://json-schema.org/draft-04/schema#', id: 'http://json-schema.org/draft-04/schema#' })).toEqual({ field: '/id', rule: '`id` must not name a JSON Schema meta-schema' });
  });
});

describe('the closed vocabulary: each refusal names the keyword and where it is', () => {
  it.each([
    [{ $async: true, ...planned({ total: { type: 'number' } }) }, '/$async', '`$async` is not allowed'],
    [planned({ total: { $async: true } }), '/properties/properties/properties/total/$async', '`$async` is not allowed'],
    [{ $ref: 'https://evil.example/schema.json' }, '/$ref', '`$ref` must point inside the rule'],
    [{ allOf: [{ $ref: '#' }] }, '/allOf/0/$ref', '`$ref` must point inside the rule'],
    [{ properties: { x: { $ref: '#/definitions/missing' } } }, '/properties/x/$ref', '`$ref` points at no definition'],
    [{ definitions: { loop: { allOf: [{ $ref: '#/definitions/loop' }] } }, properties: { x: { $ref: '#/definitions/loop' } } }, '/definitions/loop/allOf/0/$ref', '`$ref` cycle: #/definitions/loop → #/definitions/loop'],
    [{ $defs: { a: { $ref: '#/$defs/b' }, b: { items: { $ref: '#/$defs/a' } } }, $ref: '#/$defs/a' }, '', '`$ref` cycle'],
    [{ $anchor: 'x' }, '/$anchor', '`$anchor` is not allowed'],
    [{ $dynamicRef: '#x' }, '/$dynamicRef', '`$dynamicRef` is not allowed'],
    [{ $recursiveRef: '#' }, '/$recursiveRef', '`$recursiveRef` is not allowed'],
    [planned({ x: { $id: 'https://schemas.example.com/x.json' } }), '/properties/properties/properties/x/$id', '`$id` is allowed only at the root'],
    [planned({ x: { format: 'url' } }), '/properties/properties/properties/x/format', 'format "url" is not one a rule may use'],
    [planned({ x: { format: 'regex' } }), '/properties/properties/properties/x/format', 'format "regex" is not one a rule may use'],
    [planned({ x: { pattern: 'a[ab]{1000}$' } }), '/properties/properties/properties/x/pattern', 'RE2 instructions, over 1000'],
    [planned({ x: { requird: ['y'] } }), '/properties/properties/properties/x/requird', 'unknown keyword "requird"'],
  ])('refuses %j', (jsonSchema, field, rule) => {
    const error = refusal(jsonSchema);
    expect(error?.field).toBe(field === '' ? error?.field : field);
    expect(error?.rule).toContain(rule);
  });

  it('refuses a reference chain that doubles at each level (28 levels: 1 s an event before), and takes a short one', () => {
    const chain = (levels: number) => {
      const definitions: Record<string, unknown> = { [`d${levels}`]: { type: 'string' } };
      for (let i = 0; i < levels; i++) definitions[`d${i}`] = { allOf: [{ $ref: `#/definitions/d${i + 1}` }, { $ref: `#/definitions/d${i + 1}` }] };
      return { definitions, properties: { properties: { properties: { x: { $ref: '#/definitions/d0' } } } } };
    };
    expect(refusal(chain(28))).toEqual({ field: '', rule: `expands to more than ${JSON_SCHEMA_BOUNDS.maxExpandedNodes} schema nodes with its references followed (each evaluation would visit them all)` });
    expect(ok(chain(8)).check({ properties: { x: 1 } }).length).toBeGreaterThan(0);
  });

  it('takes a Segment export: labels, description, draft-07, local definitions', () => {
    const rule = ok({ $schema: 'http://json-schema.org/draft-07/schema#', labels: {}, description: 'd', definitions: { money: { type: 'number', minimum: 0 } }, ...planned({ total: { $ref: '#/definitions/money' }, at: { type: 'string', format: 'date-time' } }) });
    expect(rule.check({ properties: { total: -1, at: '2026-01-01T00:00:00Z' } }).map((error) => error.keyword)).toEqual(['minimum']);
  });
});

describe('a stated cost per evaluation: past a bound, a violation that says why', () => {
  const long = JSON_SCHEMA_BOUNDS.maxCheckedStringLength + 1;

  it.each([
    ['format', { type: 'string', format: 'uri' }, `http://${':'.repeat(32_000)}!`],
    ['format', { type: 'string', format: 'email' }, `${'a'.repeat(long)}@example.com`],
    ['pattern', { type: 'string', pattern: 'a[ab]{20}$' }, 'ab'.repeat(15_000)],
  ])('a string over the bound fails %s as "too long to check"', (keyword, property, value) => {
    const [error] = ok(planned({ x: property })).check({ properties: { x: value } });
    expect(violationOf(error, 'rule-violations')).toEqual({ violationType: keyword === 'format' ? 'Format' : 'Pattern', field: 'properties.x', description: `properties.x is too long to check (over ${JSON_SCHEMA_BOUNDS.maxCheckedStringLength} characters)`, stage: 'rule-violations' });
  });

  it('checks uniqueItems over scalars in one pass, and over objects only up to its bound', () => {
    const rule = ok(planned({ list: { type: 'array', uniqueItems: true } }));
    expect(rule.check({ properties: { list: Array.from({ length: 50_000 }, (_, i) => i) } })).toEqual([]);
    expect(rule.check({ properties: { list: [1, '1', true, 'true', null, 'null'] } })).toEqual([]);
    expect(rule.check({ properties: { list: [1, 2, 1] } })[0].keyword).toBe('uniqueItems');
    expect(rule.check({ properties: { list: [{ a: 1 }, { a: 1 }] } })[0].keyword).toBe('uniqueItems');
    const [error] = rule.check({ properties: { list: Array.from({ length: 4_000 }, (_, i) => ({ i })) } });
    expect(error.message).toContain('too long to check for duplicate items');
  });
});

describe('a check never throws and never passes by accident', () => {
  it('an asynchronous validator marks its rule broken once: a violation every time, no unhandled rejection', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const reasons: string[] = [];
      const check = guardedCheck(() => Promise.reject(new Error('validation failed')), () => null, (reason) => reasons.push(reason));
      expect(check({})[0].keyword).toBe('broken');
      expect(check({})[0].keyword).toBe('broken');
      await new Promise((resolve) => setImmediate(resolve));
      expect(reasons).toEqual(['the rule answered object, not true or false']);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('a validator that throws (a stack run out, a throwing getter) is a broken rule, never a throw into ingestion', () => {
    const reasons: string[] = [];
    const check = guardedCheck(() => {
      throw new RangeError('Maximum call stack size exceeded');
    }, () => null, (reason) => reasons.push(reason));
    expect(check({}).map((error) => violationOf(error, 'common-violations').violationType)).toEqual(['Other']);
    expect(reasons).toEqual(['the rule threw RangeError']);
  });
});

describe('omission reads names from the error path, never from the dotted field', () => {
  const AT = '2026-05-04T09:30:00.000Z';
  const omitting = controlsFrom({ track: { allowUnplannedEvents: true, allowUnplannedEventProperties: true, allowEventOnViolations: true, allowPropertiesOnViolations: false, commonEventOnViolations: 'ALLOW' } } as never);

  it('omits a violating property whatever its name holds (`.`, `/`, `~`), and lists it', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z./~]{1,8}$/), (name) => {
        const plan = compilePlan({ id: 'tp_n', name: 'N' }, [{ type: 'TRACK', key: 'E', version: 1, jsonSchema: planned({ [name]: { type: 'string', maxLength: 4 }, ok: { type: 'string' } }), createdAt: AT, updatedAt: AT }]);
        const verdict = decidePlan({ type: 'track', event: 'E', userId: 'u', properties: { [name]: '4111111111111111', ok: 'x' } } as never, plan, omitting);
        expect(verdict.status).toBe('omitted');
        expect(Object.keys(verdict.body.properties as object)).toEqual(name === 'ok' ? [] : ['ok']);
        expect(verdict.omitted).toContain(`properties.${name}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('omits card.number, as the review found it delivered', () => {
    const plan = compilePlan({ id: 'tp_c', name: 'C' }, [{ type: 'TRACK', key: 'Paid', version: 1, jsonSchema: planned({ 'card.number': { type: 'string', maxLength: 4 }, 'a/b': { type: 'string', maxLength: 4 } }), createdAt: AT, updatedAt: AT }]);
    const verdict = decidePlan({ type: 'track', event: 'Paid', userId: 'u', properties: { 'card.number': '4111111111111111', 'a/b': 'xxxxxxxx' } } as never, plan, omitting);
    expect(verdict.body.properties).toEqual({});
    expect(verdict.omitted.sort()).toEqual(['properties.a/b', 'properties.card.number']);
  });
});

describe('every language passes the one entry', () => {
  it.each([
    ['fql', 'event = "x" and (', ''],
    ['re2', '(?!x)', ''],
    ['re2', 'x{1000}{1000}', ''],
  ] as const)('%s refuses %j as a value', (language, source, field) => {
    const compiled = compileProgram(language, source);
    expect(compiled.ok).toBe(false);
    if (!compiled.ok) expect(compiled.error.field).toBe(field);
  });

  it('the mapping language refuses an unknown directive', () => {
    const trigger = compileProgram('fql', 'type = "track"');
    if (!trigger.ok) throw new Error(trigger.error.rule);
    const compiled = compileProgram('mapping', { data: { x: { '@nonsense': 1 } }, trigger: trigger.program });
    expect(compiled.ok).toBe(false);
  });
});
