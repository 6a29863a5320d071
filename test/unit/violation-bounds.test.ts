import fc from 'fast-check';
import { boundedName, boundViolations, MAX_VIOLATION_NAME_CHARS, MAX_VIOLATIONS_PER_MESSAGE, MORE_VIOLATIONS_FIELD, normalisedField } from '../../src/plans/violation-bounds';
import type { Violation } from '../../src/plans/violations';
import { forwardedPages, FORWARDED_PAGE_CALLS } from '../../src/messages/forwarded-pages';
import { MAX_BATCH_BYTES } from '../../src/messages/call-rules';
import type { Call } from '../../src/messages/call';

/** What one message's violations may be: grouped per field (array indexes as `[]`), bounded in number and in the names they quote. Pure. */

const datatype = (field: string): Violation => ({ violationType: 'Datatype', field, description: `${field} must be string`, stage: 'rule-violations' });

describe('a violation field as violations are grouped', () => {
  it.each([
    ['properties.price', 'properties.price'],
    ['properties.items.5371', 'properties.items[]'],
    ['properties.items.0.sku', 'properties.items[].sku'],
    ['properties.matrix.1.2', 'properties.matrix[][]'],
    ['event', 'event'],
    ['', ''],
    ['properties.v2', 'properties.v2'],
  ])('%s → %s', (field, expected) => {
    expect(normalisedField(field)).toBe(expected);
  });

  it('cuts a long name to the bound, marking the cut', () => {
    const cut = boundedName('é'.repeat(5_000));
    expect(Array.from(cut)).toHaveLength(MAX_VIOLATION_NAME_CHARS);
    expect(cut.endsWith('…')).toBe(true);
    expect(boundedName('Order Completed')).toBe('Order Completed');
  });
});

describe("a message's violations, bounded", () => {
  it('6,000 items of the wrong type are one violation of `properties.items[]`', () => {
    const bounded = boundViolations(Array.from({ length: 6_000 }, (_, i) => datatype(`properties.items.${i}`)));
    expect(bounded).toEqual([{ violationType: 'Datatype', field: 'properties.items[]', description: 'properties.items[] must be string', stage: 'rule-violations' }]);
  });

  it(`3,300 unplanned names are ${MAX_VIOLATIONS_PER_MESSAGE - 1} violations and one summary counting the rest`, () => {
    const names = Array.from({ length: 3_300 }, (_, i) => ({ violationType: 'Unplanned-Property' as const, field: `properties.k${i}`, description: `properties.k${i} is not planned for this event`, stage: 'unplanned-properties' as const }));
    const bounded = boundViolations(names);
    expect(bounded).toHaveLength(MAX_VIOLATIONS_PER_MESSAGE);
    expect(bounded.slice(0, -1)).toEqual(names.slice(0, MAX_VIOLATIONS_PER_MESSAGE - 1));
    expect(bounded.at(-1)).toEqual({ violationType: 'Other', field: MORE_VIOLATIONS_FIELD, description: `${3_300 - (MAX_VIOLATIONS_PER_MESSAGE - 1)} more violations of this message, not listed one by one`, stage: 'unplanned-properties' });
  });

  it(`exactly ${MAX_VIOLATIONS_PER_MESSAGE} distinct violations are kept as they are`, () => {
    const given = Array.from({ length: MAX_VIOLATIONS_PER_MESSAGE }, (_, i) => datatype(`properties.p${i}`));
    expect(boundViolations(given)).toEqual(given);
  });

  it('a long field is quoted bounded in its field and description', () => {
    const [violation] = boundViolations([datatype(`properties.${'n'.repeat(20_000)}`)]);
    expect(violation.field.length).toBeLessThanOrEqual(MAX_VIOLATION_NAME_CHARS);
    expect(violation.description).toBe(`${violation.field} must be string`);
  });

  it('never more than the bound, every name bounded, nothing but what was given or the summary (property)', () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    console.log(`violation-bounds property test: FC_SEED=${seed} replays this run`);
    const field = fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.nat({ max: 9999 }).map(String)), { minLength: 1, maxLength: 4 }).map((segments) => segments.join('.'));
    fc.assert(
      fc.property(fc.array(field, { maxLength: 80 }), (fields) => {
        const bounded = boundViolations(fields.map(datatype));
        expect(bounded.length).toBeLessThanOrEqual(MAX_VIOLATIONS_PER_MESSAGE);
        for (const v of bounded) {
          expect(Array.from(v.field).length).toBeLessThanOrEqual(MAX_VIOLATION_NAME_CHARS);
          expect(v.field === MORE_VIOLATIONS_FIELD || fields.some((f) => normalisedField(f) === v.field)).toBe(true);
        }
        expect(new Set(bounded.map((v) => `${v.violationType} ${v.field}`)).size).toBe(bounded.length);
      }),
      { seed, numRuns: 200 },
    );
  });
});

describe('forwarded calls in pages', () => {
  const call = (bytes: number, i: number): Call => ({ type: 'track', fields: { userId: 'schema-violations', event: 'Violation Generated', messageId: `m-${i}`, properties: { pad: 'x'.repeat(bytes) } } });

  it(`pages of at most ${FORWARDED_PAGE_CALLS} calls, in order`, () => {
    const calls = Array.from({ length: 250 }, (_, i) => call(10, i));
    const { pages, refused } = forwardedPages(calls);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
    expect(pages.flat()).toEqual(calls);
    expect(refused).toEqual([]);
  });

  it('pages of at most the request bound in bytes', () => {
    const calls = Array.from({ length: 40 }, (_, i) => call(30_000, i));
    const { pages } = forwardedPages(calls);
    for (const page of pages) expect(page.reduce((n, c) => n + Buffer.byteLength(JSON.stringify(c.fields)), 0)).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    expect(pages.flat()).toHaveLength(40);
  });

  it('refuses one call over 32 KB alone, never its page', () => {
    const { pages, refused } = forwardedPages([call(10, 0), call(40_000, 1), call(10, 2)]);
    expect(pages.flat().map((c) => c.fields.messageId)).toEqual(['m-0', 'm-2']);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/a message may be at most 32768 bytes/);
  });
});
