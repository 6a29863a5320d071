import { INTEGRATION_NAME, isIntegrationEnabled } from '../delivery/integrations';
import type { StopReason } from '../delivery/stop-reasons';
import type { MessageBody } from '../delivery/types';
import { consentAllows, isConsentChange, type ConsentSettings } from './consent';
import { applyFilters, type CompiledFilter } from './destination-filters';
import { matchedMappings, type CompiledTrigger } from './mapping-triggers';
import { applyTransformations, type CompiledTransformation } from './transformations';

export { STOP_REASONS, type StopReason } from '../delivery/stop-reasons';

/** Everything the decision reads about one (message, destination) pair; the caller does the lookups. */
export interface DeliveryDecisionInput {
  /** The body as it would be sent (delivery/payload.ts messageBody). */
  body: MessageBody;
  /** The call's `integrations` object, as the sender gave it. */
  integrations: Record<string, unknown> | undefined;
  /** Whether the message's user is under a SUPPRESS regulation (looked up by the caller). */
  suppressed: boolean;
  /** The source's tracking plan blocked the message (plans/plan-decision.ts, decided once per message by the caller). */
  planBlocked?: boolean;
  destination: {
    consent: ConsentSettings;
    /** The destination's filters, compiled once (destination-filters.ts compileFilter), in saved order. */
    filters: readonly CompiledFilter[];
    /** Its key in the `integrations` object (delivery/integrations.ts integrationNameOf); absent: "Webhooks". */
    integrationName?: string;
    /** An actions destination's enabled mappings, triggers compiled once; absent for `webhooks`. */
    mappings?: readonly CompiledTrigger[];
    /**
     * The source's transformations (rules/transformations.ts), compiled once, in saved order:
     * `source` those of the whole source (no destinationMetadataId), the same list for every
     * destination of it; `destination` those scoped to this destination's catalog entry.
     */
    transformations?: { source: readonly CompiledTransformation[]; destination: readonly CompiledTransformation[] };
  };
}

/**
 * `send`: the body to deliver (transformations and filters may have changed it; the input is never
 * changed); `transformed` the ids of the transformations that changed it.
 * `stop`: the first rule that stopped it; `filterId` names the filter for `filters` and `sampled`,
 * the transformation for `transformation`.
 */
export type DeliveryDecision = { send: MessageBody; mappings?: string[]; transformed?: string[] } | { stop: StopReason; filterId?: string };

type RuleResult = { send: MessageBody; transformed?: string[] } | { stop: StopReason; filterId?: string };

/** A scope's transformations as a rule: the one that drops stops the message, under its id. */
const transformationRule =
  (scope: 'source' | 'destination'): DeliveryRule =>
  ({ destination }, body) => {
    const outcome = applyTransformations(body, destination.transformations?.[scope] ?? []);
    if ('drop' in outcome) return { stop: 'transformation', filterId: outcome.drop };
    return { send: outcome.send as MessageBody, transformed: outcome.changedBy };
  };
type DeliveryRule = (input: DeliveryDecisionInput, body: MessageBody) => RuleResult;

/**
 * The one decision per (message, destination), as an ordered list of named rules. The plan's
 * verdict comes first: it is the source's, the same for every destination. Then, in Segment's
 * order, the source's own transformations (they fix the message for every destination, so every
 * later rule sees it fixed); the destination's rules; its filters; then the transformations scoped to
 * its catalog entry, on what the filters left (Segment: source-scoped before destination filters,
 * destination-scoped after them). Consent comes
 * before the `integrations` object: in Segment's reconciliation table a denied category cannot be
 * overridden by an `integrations` key. The consent change itself passes the consent rule (see
 * isConsentChange): a revocation stopped by the consent it revokes would never reach anyone.
 */
export const DELIVERY_RULES: ReadonlyArray<{ name: string; rule: DeliveryRule }> = [
  // First: a message the source's plan blocked is no message of the source's for any destination.
  { name: 'plan', rule: ({ planBlocked }, body) => (planBlocked ? { stop: 'plan' } : { send: body }) },
  { name: 'source transformations', rule: transformationRule('source') },
  {
    name: 'consent',
    rule: ({ destination }, body) => (isConsentChange(body) || consentAllows(body, destination.consent) ? { send: body } : { stop: 'consent' }),
  },
  {
    name: 'integrations',
    rule: ({ integrations, destination }, body) =>
      isIntegrationEnabled(integrations, destination.integrationName ?? INTEGRATION_NAME) ? { send: body } : { stop: 'integrations' },
  },
  { name: 'suppression', rule: ({ suppressed }, body) => (suppressed ? { stop: 'suppressed' } : { send: body }) },
  {
    name: 'filters',
    rule: ({ destination }, body) => {
      const outcome = applyFilters(body, destination.filters);
      return 'send' in outcome ? { send: outcome.send as MessageBody } : { stop: outcome.stop, filterId: outcome.filterId };
    },
  },
  { name: 'destination transformations', rule: transformationRule('destination') },
];

/**
 * The rules in order, then an actions destination's triggers, on the body the filters
 * left (as Segment runs destination filters before mappings): `mappings` names the ones that send.
 */
export function decideDelivery(input: DeliveryDecisionInput): DeliveryDecision {
  let body = input.body;
  const transformed: string[] = [];
  for (const { rule } of DELIVERY_RULES) {
    const result = rule(input, body);
    if ('stop' in result) return result;
    body = result.send;
    if (result.transformed) transformed.push(...result.transformed);
  }
  const changes = transformed.length > 0 ? { transformed } : {};
  if (!input.destination.mappings) return { send: body, ...changes };
  const mappings = matchedMappings(body, input.destination.mappings);
  return mappings.length > 0 ? { send: body, mappings, ...changes } : { stop: 'trigger' };
}
