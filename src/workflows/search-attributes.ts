import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes, so operators can find deliveries in the Temporal Web UI
 * (e.g. `SwitchyardStatus = "retrying" AND ExecutionStatus = "Running" AND SwitchyardSource = "src_..."`).
 * Registered by scripts/temporal-dev.sh and scripts/temporal-server.sh; keep the lists in step (a unit test checks).
 */
export const SOURCE = defineSearchAttributeKey('SwitchyardSource', SearchAttributeType.KEYWORD);
export const DESTINATIONS = defineSearchAttributeKey('SwitchyardDestinations', SearchAttributeType.KEYWORD_LIST);
export const MESSAGE_TYPE = defineSearchAttributeKey('SwitchyardType', SearchAttributeType.KEYWORD);
export const USER_ID = defineSearchAttributeKey('SwitchyardUserId', SearchAttributeType.KEYWORD);
export const STATUS = defineSearchAttributeKey('SwitchyardStatus', SearchAttributeType.KEYWORD);
/** Set at start only (client side) when the message has one: a regulation finds anonymous-only deliveries of a user's linked ids. */
export const ANONYMOUS_ID = defineSearchAttributeKey('SwitchyardAnonymousId', SearchAttributeType.KEYWORD);
/**
 * Each destination's own outcome, `<outcome>:<destinationId>` (delivery/destination-outcomes.ts):
 * `retrying` from the start, then delivered / failed / stopped as each destination finishes.
 */
export const OUTCOMES = defineSearchAttributeKey('SwitchyardOutcomes', SearchAttributeType.KEYWORD_LIST);

export const ALL_SEARCH_ATTRIBUTES = [SOURCE, DESTINATIONS, MESSAGE_TYPE, USER_ID, STATUS, ANONYMOUS_ID, OUTCOMES];

/**
 * Lifecycle of one message's delivery, as shown in SwitchyardStatus. A delivery that succeeds writes
 * no last status (DeliveryPolicy.deliveredImplied): a completed run still `delivering` or `retrying`
 * was delivered (temporal/delivery-query.ts deliveryStatus and statusClause read it so).
 */
export type DeliveryStatus = 'delivering' | 'retrying' | 'delivered' | 'failed' | 'stopped';
