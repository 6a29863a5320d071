import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { isDateTime, isJsSpace } from '../../src/programs/json-schema-date-time';

/**
 * The tracking plan's `date-time` check answers exactly as ajv-formats' full
 * `date-time` does (the check it replaces), on tables of edge cases and on generated strings.
 * FC_SEED replays a failure; the seed is printed.
 */
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? 4242 : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FC_RUNS ?? 5_000);

const ajvDateTime = (addFormats.get('date-time') as { validate: (text: string) => boolean }).validate;

beforeAll(() => {
  console.log(`plan-date-time-format property test: FC_SEED=${SEED} (FC_RUNS=${RUNS}) replays this run`);
});

describe('isDateTime, the date-time format as ajv-formats (full) answers it', () => {
  const valid = [
    '2026-11-28T10:00:00.000Z',
    '2026-11-28t10:00:00z',
    '2026-11-28 10:00:00Z',
    '2026-11-28\t10:00:00Z',
    '2026-11-28\u00a010:00:00Z',
    '2026-11-28\u300010:00:00Z',
    '2026-11-28\ufeff10:00:00Z',
    '2026-11-28T10:00:00+01:00',
    '2026-11-28T10:00:00-0130',
    '2026-11-28T10:00:00+05',
    '2026-11-28T10:00:00.1+23:59',
    '2026-11-28T23:59:59.999999999999Z',
    '2024-02-29T00:00:00Z', // leap year
    '2000-02-29T00:00:00Z', // divisible by 400
    '0000-02-29T00:00:00Z', // year 0 is a leap year
    '9999-12-31T23:59:59Z',
    '2016-12-31T23:59:60Z', // leap second, UTC
    '2016-12-31T23:59:60.5Z',
    '2016-12-31T15:59:60-08:00', // leap second at 23:59 UTC
    '2017-01-01T00:59:60+01:00',
    '2017-01-01T00:00:60+00:01', // ajv-formats' minute −1
    '2016-12-31T24:59:30+01:00', // ajv-formats' quirk: an hour past 23 that is 23 in UTC
  ];
  const invalid = [
    '',
    '2026-11-28',
    '2026-11-28T10:00:00', // no time zone
    '2026-11-28T10:00Z',
    '2026-11-28T10:00:00.Z',
    '2026-11-28TT10:00:00Z',
    '2026-11-28T10:00:00ZT',
    '2026-11-28T10:00:00Z ',
    ' 2026-11-28T10:00:00Z',
    '2026-11-28X10:00:00Z',
    '2026-11-28\u200b10:00:00Z', // zero-width space is no \s
    '2026-13-01T00:00:00Z',
    '2026-00-01T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z', // divisible by 100, not 400
    '2026-11-28T24:00:00Z',
    '2026-11-28T10:60:00Z',
    '2026-11-28T10:00:60Z', // a leap second not at 23:59 UTC
    '2016-12-31T23:59:61Z',
    '2016-12-31T23:59:60.99999999999999999Z', // rounds to 61, as ajv-formats reads it
    '2026-11-28T23:59:59.99999999999999999+01:00', // rounds to 60, not 23:59 UTC
    '2026-11-28T10:00:00+24:00',
    '2026-11-28T10:00:00+01:60',
    '2026-11-28T10:00:00+1:00',
    '2026-11-28T10:00:00+01:0',
    '2026-11-28T10:00:00+010',
    '2026-11-28T10:00:00+01:',
    '２０２６-11-28T10:00:00Z', // full-width digits are no \d
    '2026-11-28T10:00:00.００Z',
    '2026/11/28T10:00:00Z',
    '20261-1-28T10:00:00Z',
    '2026-11-28T10:00:00Zz',
    '2026-11-28T10:00:00\n',
    '2026-11-28T10:00:00Z\n',
  ];

  it.each(valid)('accepts %j, as ajv-formats does', (text) => {
    expect(ajvDateTime(text)).toBe(true);
    expect(isDateTime(text)).toBe(true);
  });
  it.each(invalid)('refuses %j, as ajv-formats does', (text) => {
    expect(ajvDateTime(text)).toBe(false);
    expect(isDateTime(text)).toBe(false);
  });

  it('reads JavaScript \\s exactly, over every UTF-16 code unit', () => {
    const disagreeing: number[] = [];
    for (let code = 0; code <= 0xffff; code++) if (isJsSpace(code) !== /\s/.test(String.fromCharCode(code))) disagreeing.push(code);
    expect(disagreeing).toEqual([]);
  });

  it('agrees with ajv-formats on generated strings near a date-time, valid or not', () => {
    // Each position drawn from what matters there, or anything: digits near every bound, separators, zones.
    const digit = fc.constantFrom(...'0123456789');
    const part = (...choices: string[]) => fc.oneof({ weight: 40, arbitrary: fc.constantFrom(...choices) }, { weight: 1, arbitrary: fc.string({ maxLength: 3 }) });
    const twoDigits = (...common: string[]) => fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...common) }, { weight: 1, arbitrary: fc.tuple(digit, digit).map(([a, b]) => a + b) });
    const text = fc.tuple(
      fc.oneof(fc.constantFrom('2024', '2023', '2000', '1900', '0000', '9999'), fc.tuple(digit, digit, digit, digit).map((d) => d.join(''))),
      part('-'),
      twoDigits('01', '02', '04', '12', '13', '00'),
      part('-'),
      twoDigits('01', '28', '29', '30', '31', '32', '00'),
      part('T', 'T', 'T', 't', ' ', '\u00a0', '\u2028', 'TT', 'x', ''),
      twoDigits('00', '23', '24', '15', '99'),
      part(':'),
      twoDigits('00', '59', '60'),
      part(':'),
      twoDigits('00', '59', '60', '61'),
      fc.oneof(fc.constant(''), fc.constantFrom('.5', '.', '.999999999999999999', '.0001'), fc.stringMatching(/^\.[0-9]{1,20}$/)),
      fc.oneof(fc.constantFrom('Z', 'Z', 'Z', 'z', '', '+', '-', 'ZZ', 'T'), fc.tuple(fc.constantFrom('+', '-'), twoDigits('00', '01', '08', '23', '24'), fc.constantFrom('', ':', '::'), fc.oneof(fc.constant(''), twoDigits('00', '01', '30', '59', '60'))).map((p) => p.join(''))),
      fc.oneof({ weight: 9, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.string({ maxLength: 2 }) }),
    ).map((parts) => parts.join(''));
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 20, arbitrary: text }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) }), (candidate) => {
        const expected = ajvDateTime(candidate);
        accepted += expected ? 1 : 0;
        if (isDateTime(candidate) !== expected) expect([candidate, isDateTime(candidate)]).toEqual([candidate, expected]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Both sides of the line are exercised, not only refusals.
    expect(accepted).toBeGreaterThan(RUNS / 200);
    expect(accepted).toBeLessThan(RUNS - RUNS / 200);
  });
});
