import { functionDisposition } from '../../src/functions/disposition';
import { acceptedInstanceSettings, maskedInstanceSettings } from '../../src/functions/instance-settings';
import type { FunctionSetting } from '../../src/store/functions';

/** Segment's dispositions of what a destination function throws, on Switchyard's delivery rules. */
describe('functionDisposition', () => {
  const cases: [string, ReturnType<typeof functionDisposition>['kind'], string | undefined][] = [
    ['RetryError', 'retry', 'function:retry'],
    ['Timeout', 'retry', 'function:timeout'],
    ['EventNotSupported', 'stopped', 'function:unsupported'],
    ['InvalidEventPayload', 'failed', 'function:rejected'],
    ['ValidationError', 'failed', 'function:rejected'],
    ['DropEvent', 'stopped', 'function:dropped'],
    ['TypeError', 'failed', 'function:error'],
    ['Error', 'failed', 'function:error'],
    ['MemoryLimit', 'failed', 'function:error'],
    ['OutputTooLarge', 'failed', 'function:error'],
  ];
  it.each(cases)('%s → %s (%s)', (type, kind, word) => {
    const disposition = functionDisposition({ type, message: 'why' });
    expect(disposition.kind).toBe(kind);
    expect('reason' in disposition && disposition.reason).toBe(`${word}: ${type}`);
  });

  it('a handler that returns is delivered', () => {
    expect(functionDisposition(undefined)).toEqual({ kind: 'delivered' });
  });
});

describe('a function instance\'s settings', () => {
  const definitions: FunctionSetting[] = [
    { name: 'url', label: 'URL', description: '', type: 'STRING', required: true, sensitive: false },
    { name: 'apiKey', label: 'Key', description: '', type: 'STRING', required: true, sensitive: true },
    { name: 'tags', label: 'Tags', description: '', type: 'ARRAY', required: false, sensitive: true },
    { name: 'on', label: 'On', description: '', type: 'BOOLEAN', required: false, sensitive: false },
    { name: 'map', label: 'Map', description: '', type: 'TEXT_MAP', required: false, sensitive: false },
  ];
  const refusals: [Record<string, unknown>, string][] = [
    [{ url: 'u' }, 'settings.apiKey: is required by the function'],
    [{ url: 1, apiKey: 'k' }, 'settings.url: must be a string (the setting is STRING)'],
    [{ url: 'u', apiKey: 'k', on: 'yes' }, 'settings.on: must be true or false (the setting is BOOLEAN)'],
    [{ url: 'u', apiKey: 'k', tags: [1] }, 'settings.tags: must be an array of strings (the setting is ARRAY)'],
    [{ url: 'u', apiKey: 'k', map: { a: 1 } }, 'settings.map: must be an object of string values (the setting is TEXT_MAP)'],
    [{ url: 'u', apiKey: 'k', nope: 1 }, 'settings.nope: the function defines no such setting (it defines: url, apiKey, tags, on, map)'],
  ];
  it.each(refusals)('refuses %j', (given, rule) => {
    expect(acceptedInstanceSettings(definitions, given)).toEqual({ rule });
  });

  it('masks sensitive values, and a masked value sent back keeps the stored one', () => {
    const stored = { url: 'https://example.com', apiKey: 'abcdefgh1234', tags: ['secret-tag-1'] };
    const masked = maskedInstanceSettings(definitions, stored);
    expect(masked).toEqual({ url: 'https://example.com', apiKey: '••••••••••1234', tags: ['••••••••••ag-1'] });
    expect(acceptedInstanceSettings(definitions, masked, stored)).toEqual({ settings: stored });
    // A masked-looking value with nothing stored is taken as given.
    expect(acceptedInstanceSettings(definitions, { url: 'u', apiKey: '••••••••••1234' })).toEqual({ settings: { url: 'u', apiKey: '••••••••••1234' } });
  });
});
