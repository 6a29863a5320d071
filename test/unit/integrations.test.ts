import { isIntegrationEnabled } from '../../src/delivery/integrations';

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
