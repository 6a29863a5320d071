/** The name of this destination in a message's `integrations` object (seed: case sensitive). */
export const INTEGRATION_NAME = 'Webhooks';

/**
 * Seed, Selecting destinations: keys are case-sensitive destination names; all are on by default;
 * `All: false` turns off every destination not explicitly set true. A non-boolean value (Segment
 * clients send per-destination option objects) counts as enabled.
 */
export function isIntegrationEnabled(integrations: Record<string, unknown> | undefined, name = INTEGRATION_NAME): boolean {
  if (!integrations) return true;
  const own = integrations[name];
  if (own !== undefined) return own !== false;
  return integrations.All !== false;
}
