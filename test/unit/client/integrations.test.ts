import { integrationsProblem, isDestinationEnabled } from '../../../src/client/integrations';

describe('isDestinationEnabled (seed: Selecting destinations)', () => {
  it.each([
    ['no integrations map: every destination is on', undefined, true],
    ['an empty map: on', {}, true],
    ['set true: on', { Webhooks: true }, true],
    ['set false: off', { Webhooks: false }, false],
    ['All false turns it off', { All: false }, false],
    ['All false, but set true: on', { All: false, Webhooks: true }, true],
    ['All true, but set false: off', { All: true, Webhooks: false }, false],
    ['names are case-sensitive: webhooks is another destination', { All: false, webhooks: true }, false],
    ['names are case-sensitive: turning off webhooks leaves Webhooks on', { webhooks: false }, true],
    ['an options object means on', { All: false, Webhooks: { secretHeader: 'x' } }, true],
  ])('%s', (_, integrations, enabled) => expect(isDestinationEnabled(integrations, 'Webhooks')).toBe(enabled));
});

describe('integrationsProblem', () => {
  it.each([
    [{ All: false, Webhooks: true }],
    [{ Webhooks: { option: 1 } }],
    [{}],
    [{ Webhooks: undefined }],
  ])('accepts %p', (value) => expect(integrationsProblem(value)).toBeUndefined());

  it.each([
    [{ Webhooks: 'false' }, { key: 'Webhooks' }],
    [{ Webhooks: 0 }, { key: 'Webhooks' }],
    [{ All: 'no' }, { key: 'All' }],
    [{ Webhooks: null }, { key: 'Webhooks' }],
    [['Webhooks'], { rule: 'must be an object of destination names to true, false or an options object' }],
    ['Webhooks', { rule: 'must be an object of destination names to true, false or an options object' }],
  ])('refuses %p', (value, expected) => expect(integrationsProblem(value)).toMatchObject(expected));
});
