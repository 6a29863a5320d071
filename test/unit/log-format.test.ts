import { loadConfig } from '../../src/config';
import { logFormat, type LogFormat, type LogFormatSetting } from '../../src/logger';

describe('log format (LOG_FORMAT)', () => {
  const cases: Array<[LogFormatSetting, boolean, LogFormat]> = [
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['pretty', true, 'pretty'],
    ['pretty', false, 'pretty'],
    ['json', true, 'json'],
    ['json', false, 'json'],
  ];
  it.each(cases)('LOG_FORMAT=%s with stdout a TTY=%s logs %s', (setting, isTTY, expected) => {
    expect(logFormat(setting, isTTY)).toBe(expected);
  });

  it('defaults to auto and refuses other values, naming the variable', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/LOG_FORMAT.*"text" is not one of auto, pretty, json/s);
  });
});
