import secureJson from 'secure-json-parse';
import type { RuleViolation } from '../delivery/webhook-rules';
import { jsonNestingDepth, MAX_JSON_DEPTH } from '../api/json-body';

/**
 * A Webhooks (Actions) subscription pastes unchanged, as Segment's Public API returns it
 * (`id`, `actionId`, `actionSlug`, `modelId`, `destinationId`, `settings.enable_batching`,
 * `settings.batch_size`, `settings.batch_keys`) and as its Terraform provider writes it (snake_case
 * ids, `settings` a JSON string). Those keys are read, checked and then ignored: they describe
 * Segment's copy, not what Switchyard sends. Only what would change what is sent is refused.
 */

/** Switchyard's destination ids: a `destinationId` in this form names one of ours; any other is Segment's own. */
const SWITCHYARD_DESTINATION_ID = /^dst_/;

export interface PastedSubscription {
  destinationId?: unknown;
  destination_id?: unknown;
  settings: { enable_batching?: unknown; __segment_internal_directive?: unknown; __segment_entities?: unknown };
}

/**
 * Segment's internal settings of a subscription that Switchyard cannot do, and what each is: refused
 * rather than dropped, since dropping one silently changes what the receiver gets.
 */
export const SEGMENT_INTERNAL_SETTINGS = {
  __segment_internal_directive:
    "is Segment's Linked Events enrichment (an @transform Segment runs on the event before the mapping, joining rows from your warehouse into it); Switchyard cannot run it, so the fields it adds would be missing from every request. Remove it to send without them, or add those fields to the event before it reaches Switchyard",
  __segment_entities:
    "is Segment's Linked Audiences entities (warehouse rows Segment attaches to each audience event); Switchyard has no warehouse connection, so the entity fields would be missing from every request. Remove it to send without them, or send the entity data in the event itself",
} as const;

/**
 * What a pasted subscription says that Switchyard cannot honour: a `destinationId` naming another of
 * Switchyard's destinations (Segment's own ids, which never take the `dst_` form, are ignored), or
 * batching switched on. `destinationId` is the route's destination, undefined on a create.
 */
export function subscriptionViolation(mapping: PastedSubscription, index: number, destinationId: string | undefined): RuleViolation | undefined {
  const at = `mappings[${index}]`;
  for (const key of ['destinationId', 'destination_id'] as const) {
    const named = mapping[key];
    if (typeof named === 'string' && SWITCHYARD_DESTINATION_ID.test(named) && named !== destinationId) {
      return {
        field: `${at}.${key}`,
        rule: `names destination ${named}, ${destinationId ? `not this one (${destinationId})` : 'not the one being created'}; leave it out, or give Segment's own id (it is ignored)`,
      };
    }
  }
  for (const [key, rule] of Object.entries(SEGMENT_INTERNAL_SETTINGS)) {
    if (mapping.settings[key as keyof typeof SEGMENT_INTERNAL_SETTINGS] !== undefined) return { field: `${at}.settings.${key}`, rule };
  }
  if (mapping.settings.enable_batching === true) {
    return { field: `${at}.settings.enable_batching`, rule: 'batching is not supported yet: every matched event is sent as its own request; set it to false or leave it out' };
  }
  return undefined;
}

/**
 * Terraform's `settings = jsonencode({...})` (and the provider's state) hold the settings as a JSON
 * string: read as JSON exactly as a request body is (nesting bounded, prototype keys refused), so a
 * string is no way around the body's rules.
 */
export function settingsFromJsonText(text: string): { settings: Record<string, unknown> } | { rule: string } {
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return { rule: `is a JSON string nesting objects and arrays deeper than ${MAX_JSON_DEPTH} levels` };
  let parsed: unknown;
  try {
    parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    return { rule: `is a string that is not the JSON of the settings object (Terraform's jsonencode): ${(err as Error).message}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { rule: 'is a JSON string that does not hold an object' };
  return { settings: parsed as Record<string, unknown> };
}
