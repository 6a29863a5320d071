import { createLog, isDebugEnabled, type Logger } from '../../../src/client/logger';

describe('isDebugEnabled (seed: DEBUG=analytics)', () => {
  it.each([
    ['analytics', true],
    ['*', true],
    ['analytics*', true],
    ['express:*,analytics', true],
    ['express:* analytics', true],
    ['*,-analytics', false],
    ['analytics,-analytics', false],
    ['analytic', false],
    ['analytics:other', false],
    ['express', false],
    ['', false],
    [undefined, false],
  ])('DEBUG=%p → %p', (value, enabled) => expect(isDebugEnabled(value)).toBe(enabled));
});

describe('createLog', () => {
  const capture = () => {
    const lines: [string, string][] = [];
    const logger: Logger = {
      debug: (m) => lines.push(['debug', m]),
      warn: (m) => lines.push(['warn', m]),
      error: (m) => lines.push(['error', m]),
    };
    return { lines, logger };
  };

  it('drops debug lines unless debug is on, and always passes warnings and errors', () => {
    const off = capture();
    const quiet = createLog(off.logger, false);
    quiet.debug('d');
    quiet.warn('w');
    quiet.error('e');
    expect(off.lines).toEqual([['warn', 'w'], ['error', 'e']]);

    const on = capture();
    createLog(on.logger, true).debug('d');
    expect(on.lines).toEqual([['debug', 'd']]);
  });

  it('survives a logger that throws', () => {
    const broken: Logger = { debug: () => { throw new Error('x'); }, warn: () => { throw new Error('x'); }, error: () => { throw new Error('x'); } };
    const log = createLog(broken, true);
    expect(() => { log.debug('a'); log.warn('b'); log.error('c'); }).not.toThrow();
  });

  it('calls a console-like logger without a trailing undefined', () => {
    const calls: unknown[][] = [];
    const consoleLike = { debug: (...a: unknown[]) => calls.push(a), warn: (...a: unknown[]) => calls.push(a), error: (...a: unknown[]) => calls.push(a) };
    const log = createLog(consoleLike, true);
    log.warn('plain');
    log.warn('with details', { n: 1 });
    expect(calls).toEqual([['plain'], ['with details', { n: 1 }]]);
  });
});
