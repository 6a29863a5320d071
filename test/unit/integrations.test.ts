import { ACTIONS_INTEGRATION_NAME, INTEGRATION_NAME, integrationNameOf, isIntegrationEnabled } from '../../src/delivery/integrations';

describe('isIntegrationEnabled (seed: Selecting destinations)', () => {
  it.each([
    [undefined, true],
    [{}, true],
    [{ Webhooks: false }, false],
    [{ Webhooks: true }, true],
    [{ All: false }, false],
    [{ All: false, Webhooks: true }, true],
    [{ All: true, Webhooks: false }, false],
    [{ webhooks: false }, true],
    [{ All: false, webhooks: true }, false],
    [{ Webhooks: { someOption: 1 } }, true],
    [{ Mixpanel: false }, true],
  ])('%j → %s', (integrations, enabled) => {
    expect(isIntegrationEnabled(integrations as Record<string, unknown> | undefined)).toBe(enabled);
  });
});

describe("integrations keys as Segment names them: a destination's key by its kind", () => {
  it.each([
    ['a classic webhook destination', {}, 'Webhooks'],
    ['an Actions destination (it has mappings)', { mappings: [] }, 'Webhooks (Actions)'],
    ['a kind with a display name of its own (a destination function)', { mappings: undefined, integrationName: 'Enrich orders (Acme)' }, 'Enrich orders (Acme)'],
  ])('%s → %s', (_, destination, name) => {
    expect(integrationNameOf(destination)).toBe(name);
  });

  // Segment's documented examples (Selecting destinations), for both kinds of webhook destination.
  it.each([
    [{ 'Webhooks (Actions)': false }, { classic: true, actions: false }],
    [{ Webhooks: false }, { classic: false, actions: true }],
    [{ All: false, 'Webhooks (Actions)': true }, { classic: false, actions: true }],
    [{ All: false, Webhooks: true }, { classic: true, actions: false }],
    [{ All: true, 'Webhooks (Actions)': false, Webhooks: false }, { classic: false, actions: false }],
    [{ 'webhooks (actions)': false }, { classic: true, actions: true }],
    [{ constructor: false }, { classic: true, actions: true }],
  ])('%j → %j', (integrations, expected) => {
    expect({ classic: isIntegrationEnabled(integrations, INTEGRATION_NAME), actions: isIntegrationEnabled(integrations, ACTIONS_INTEGRATION_NAME) }).toEqual(expected);
  });
});
