import { cronProblem, parseCron } from '../../src/personas/cron';
import { parseWithin, windowStart } from '../../src/personas/within';

describe('schedule: cron expressions a Temporal Schedule accepts', () => {
  it.each(['*/15 * * * *', '0 * * * *', '30 2 * * 1-5', '0 9,17 * * MON-FRI', '0 0 1 JAN *', '5-55/10 */2 1,15 * ?', '@hourly', '@daily', '@weekly', '@monthly', '@yearly', ' 0 0 * * 0 '])('accepts %j', (expression) => {
    expect(cronProblem(expression)).toBeUndefined();
  });

  it.each([
    ['*/15 * * *', '"*/15 * * *" has 4 field(s); a cron expression has 5: minute hour day-of-month month day-of-week (UTC), e.g. "*/15 * * * *"'],
    ['* * * * * *', '"* * * * * *" has 6 field(s); a cron expression has 5: minute hour day-of-month month day-of-week (UTC), e.g. "*/15 * * * *"'],
    ['60 * * * *', 'minute field: 60 is outside 0-59 for the minute'],
    ['0 24 * * *', 'hour field: 24 is outside 0-23 for the hour'],
    ['0 0 0 * *', 'day of month field: 0 is outside 1-31 for the day of month'],
    ['0 0 * 13 *', 'month field: 13 is outside 1-12 for the month'],
    ['0 0 * * 7', 'day of week field: 7 is outside 0-6 for the day of week'],
    ['0 0 * * FUNDAY', 'day of week field: "FUNDAY" is not a day of week'],
    ['*/0 * * * *', 'minute field: "*/0": the step after "/" must be a number from 1 to 99'],
    ['10-5 * * * *', 'minute field: "10-5" runs backwards'],
    ['? * * * *', 'minute field: "?" is not a minute'],
    ['@often', '"@often" is not a known shorthand (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)'],
  ])('rejects %j: %s', (expression, message) => {
    expect(cronProblem(expression)).toBe(message);
  });

  it('parseCron is the config parser: it trims, and throws the rule', () => {
    expect(parseCron(' */5 * * * * ')).toBe('*/5 * * * *');
    expect(() => parseCron('nope')).toThrow('"nope" has 1 field(s)');
  });
});

describe('within: the look-back window of event conditions and computed traits', () => {
  it.each([['90m', 90 * 60_000], ['12h', 12 * 3_600_000], ['30d', 30 * 86_400_000], ['4w', 28 * 86_400_000], ['3650d', 3650 * 86_400_000]])('%s = %i ms', (text, ms) => {
    expect(parseWithin(text)).toBe(ms);
  });

  it.each(['30', '30 d', '1.5d', '-3d', '30s', 'd', ''])('rejects %j', (text) => {
    expect(() => parseWithin(text)).toThrow('is not a window');
  });

  it('ends at the given instant and is comparable as text with stored timestamps', () => {
    const now = Date.parse('2026-03-31T12:00:00.000Z');
    expect(windowStart('30d', now)).toBe('2026-03-01T12:00:00.000Z');
    expect(windowStart('90m', now)).toBe('2026-03-31T10:30:00.000Z');
  });
});
