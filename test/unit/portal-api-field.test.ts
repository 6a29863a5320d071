import { apiErrorField } from '../../src/portal/web/api-field';

/** The portal shows an admin API 400 beside the field its message names, in the API's own words. */
describe('apiErrorField', () => {
  const RULE = ['type', 'key', 'version', 'jsonSchema'] as const;
  it.each([
    ['name: must NOT have fewer than 1 characters', ['name', 'description'], 'name'],
    ['body/description: must NOT have more than 2000 characters', ['name', 'description'], 'description'],
    ['rules[0].jsonSchema/properties/context/not: (COMMON version 1) unknown keyword "patern"', RULE, 'jsonSchema'],
    ['rules[0].key: (TRACK version 1) is required for TRACK rules (the event name)', RULE, 'key'],
    ['rules[0].version: must be >= 1', RULE, 'version'],
    ['rules[0]: (TRACK "A" version 1) is given twice', RULE, undefined],
    ["forwardingViolationsTo: must be another source (forwarding a source's events into itself would loop)", ['track', 'forwardingViolationsTo'], 'forwardingViolationsTo'],
    ['track.commonEventOnViolations: must be equal to one of the allowed values: ALLOW, BLOCK, OMIT_PROPERTIES', ['track', 'identify'], 'track'],
    ['tracking plan tp_1 not found', ['name'], undefined],
  ] as Array<[string, readonly string[], string | undefined]>)('%s → %s', (message, fields, expected) => {
    expect(apiErrorField(message, fields)).toBe(expected);
  });
});
