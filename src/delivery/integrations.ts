/** The name of a classic webhook destination in a message's `integrations` object (seed: case sensitive). */
export const INTEGRATION_NAME = 'Webhooks';
/** Segment's catalog name of Webhooks (Actions): the key that turns an Actions destination on or off. */
export const ACTIONS_INTEGRATION_NAME = 'Webhooks (Actions)';

/**
 * A destination's key in the `integrations` object, as Segment names it: `Webhooks` for a classic
 * webhook destination, `Webhooks (Actions)` for an Actions destination (one with mappings), and
 * for a destination function the function's display name (`<Function Name> (<Workspace Name>)` on
 * Segment, whose import keeps it).
 */
export function integrationNameOf(destination: { mappings?: unknown; function?: { displayName: string } }): string {
  if (destination.function) return destination.function.displayName;
  return destination.mappings !== undefined ? ACTIONS_INTEGRATION_NAME : INTEGRATION_NAME;
}

/**
 * Seed, Selecting destinations: keys are case-sensitive destination names; all are on by default;
 * `All: false` turns off every destination not explicitly set true. A non-boolean value (Segment
 * clients send per-destination option objects) counts as enabled.
 */
export function isIntegrationEnabled(integrations: Record<string, unknown> | undefined, name = INTEGRATION_NAME): boolean {
  if (!integrations) return true;
  const own = Object.hasOwn(integrations, name) ? integrations[name] : undefined;
  if (own !== undefined) return own !== false;
  return integrations.All !== false;
}
