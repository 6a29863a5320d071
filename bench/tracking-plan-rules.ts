import type { NewTrackingPlanRule } from '../src/store/types';

/**
 * The tracking-plan bench's plan: 50 rules, one TRACK rule per event name (each with six typed
 * properties: a `pattern`, a `format`, an `enum`, a `minimum`, an integer and a nullable string;
 * two required) and a COMMON rule. bench/tracking-plan-cost.ts prices its parts; the `planned`
 * bench system connects it to a source (its first event is the bench's `Order Completed`, which its
 * messages meet, so every message passes and the runs compare like for like).
 */
export const PLAN_RULES = 50;

export const eventRule = (key: string): NewTrackingPlanRule => ({
  type: 'TRACK',
  key,
  version: 1,
  jsonSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    labels: {},
    type: 'object',
    properties: {
      properties: {
        type: 'object',
        properties: {
          orderId: { type: 'string', pattern: '^order-[0-9]+$' },
          total: { type: 'number', minimum: 0 },
          currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
          items: { type: 'integer' },
          coupon: { type: ['string', 'null'] },
          at: { type: 'string', format: 'date-time' },
        },
        required: ['orderId', 'total'],
      },
    },
  },
});

export const COMMON_RULE: NewTrackingPlanRule = { type: 'COMMON', version: 1, jsonSchema: { properties: { context: { type: 'object', properties: { library: { type: 'object' } } } } } };

/** The plan's rules: one per event name given (PLAN_RULES − 1 of them), then COMMON. */
export function planRules(events: readonly string[]): NewTrackingPlanRule[] {
  if (events.length !== PLAN_RULES - 1) throw new Error(`a ${PLAN_RULES}-rule plan has ${PLAN_RULES - 1} events, not ${events.length}`);
  return [...events.map(eventRule), COMMON_RULE];
}
