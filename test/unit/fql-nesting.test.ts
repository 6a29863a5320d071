import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { compileFilter } from '../../src/rules/destination-filters';
import { MAX_FQL_NESTING, parseFql } from '../../src/rules/fql';
import { compileTrigger } from '../../src/rules/mapping-triggers';
import { destinationRulesReader } from '../../src/messages/destination-rules';
import { triggersOf } from '../../src/messages/mapping-plan';
import { DEFAULT_CONSENT } from '../../src/rules/consent';
import type { DestinationFilterRecord } from '../../src/store/types';

/**
 * The FQL parser recursed without a limit, so a deep condition was a 500 and
 * whether it parsed depended on the process's JIT warmth. Now a nesting limit answers the same on
 * every process, and the ingest readers treat a condition that does not compile as skipped.
 */

const parenthesised = (depth: number) => `${'('.repeat(depth)}event = 'x'${')'.repeat(depth)}`;
const negated = (depth: number) => `${'!'.repeat(depth)}(event = 'x')`;

describe('FQL nesting limit', () => {
  it.each<[string, string]>([
    ['parentheses', parenthesised(MAX_FQL_NESTING)],
    ['negations', negated(MAX_FQL_NESTING - 1)],
  ])('parses %s nested up to the limit', (_, fql) => {
    expect(parseFql(fql).ok).toBe(true);
  });

  it.each<[string, string]>([
    ['parentheses one past the limit', parenthesised(MAX_FQL_NESTING + 1)],
    ['negations one past the limit', negated(MAX_FQL_NESTING + 1)],
    ['parentheses 2,000 deep', parenthesised(2_000)],
    ['negations 2,000 deep', negated(2_000)],
    ['"!(" 2,000 deep', `${'!('.repeat(2_000)}a = 1${')'.repeat(2_000)}`],
    ['parentheses 50,000 deep', parenthesised(50_000)],
  ])('answers the too-deep rule for %s', (_, fql) => {
    const parsed = parseFql(fql);
    expect(parsed).toMatchObject({ ok: false, error: { rule: 'too-deep' } });
  });

  it('names the field, the rule and the column when a filter nests too deep', () => {
    const result = compileFilter('df_x', { title: 'deep', enabled: true, if: parenthesised(2_000), actions: [{ type: 'DROP' }] });
    expect(result).toMatchObject({ ok: false, error: { field: 'if', rule: 'too-deep', position: MAX_FQL_NESTING + 1 } });
  });

  it('answers 400 for a filter or trigger nested 2,000 deep on a cold process as on a warm one', () => {
    // The parser compiled to plain JavaScript and run by a bare `node`: a cold process without
    // tsx's loader, which cost most of a second of the unit project.
    const fql = buildSync({ entryPoints: [path.resolve(__dirname, '../../src/rules/fql.ts')], bundle: true, platform: 'node', format: 'cjs', write: false }).outputFiles[0].text;
    const script = `${fql}
      const parse = module.exports.parseFql;
      const deep = ${JSON.stringify(parenthesised(2_000))};
      const answer = () => { try { const r = parse(deep); return r.ok ? 'ok' : r.error.rule; } catch (e) { return e.constructor.name; } };
      const cold = answer();
      for (let i = 0; i < 3000; i++) parse("(((event = 'x'))) and !(a = 1)");
      console.log(JSON.stringify({ cold, warm: answer() }));`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ cold: 'too-deep', warm: 'too-deep' });
  });
});

describe('ingest readers treat a condition that does not compile as skipped, never failing ingestion', () => {
  // Far past any stack: before the limit, this threw RangeError on every process.
  const tooDeep = parenthesised(20_000);

  it('skips, logs once and caches a saved filter nested past the limit', async () => {
    const record: DestinationFilterRecord = { id: 'df_deep', destinationId: 'dst', title: 'deep', enabled: true, if: tooDeep, actions: [{ type: 'DROP' }], createdAt: 'now', updatedAt: 'now' };
    const warnings: string[] = [];
    const rulesOf = destinationRulesReader({ listEnabledFor: async () => [record] }, (message) => warnings.push(message));
    const enabled = [{ id: 'dst', webhookUrls: ['https://example.com'], consent: DEFAULT_CONSENT }];
    for (let i = 0; i < 3; i++) expect((await rulesOf(enabled)).get('dst')?.filters).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/does not compile and is skipped: if: .*nest at most 64 deep/);
  });

  it('skips a saved mapping trigger nested past the limit: it matches no message', () => {
    expect(compileTrigger({ name: 'A', trigger: tooDeep })).toBeUndefined();
    const triggers = triggersOf([{ id: 'dst', webhookUrls: [], consent: DEFAULT_CONSENT, mappings: [{ name: 'A', trigger: tooDeep }] }]);
    expect(triggers.of('dst')).toEqual({ mappings: [] });
  });
});
