/**
 * The things measured side by side: two references, Temporal's floor for a delivery, and Switchyard;
 * `design-floor` is the floor's workflow calling one no-op local activity (the least a
 * workflow that calls an activity costs); `plain` is Switchyard with PAYLOAD_ENCRYPTION=off, beside it
 * in the same run for the codec's cost; `unarchived` is Switchyard with ARCHIVE_RETENTION=0 (the archive's cost);
 * `limited` is Switchyard's own processes sending to a destination with a rate limit that never binds,
 * for the shared limiter's cost; `governed` is them sending messages with consent preferences to a
 * destination with consent categories and 10 destination filters that let them through;
 * `mapped` is them sending to an Actions destination whose two mappings both match;
 * `planned` is them sending to a source with a connected 50-rule tracking plan that every message meets;
 * `inserted` is a webhook destination running an insert function; `scripted` a destination function whose fetch is the delivery.
 */
export const SYSTEMS = ['raw', 'bare', 'floor', 'design-floor', 'switchyard', 'plain', 'unarchived', 'limited', 'governed', 'mapped', 'planned', 'inserted', 'scripted'] as const;
export type SystemName = (typeof SYSTEMS)[number];
/** What a run measures unless --systems says otherwise. */
export const DEFAULT_SYSTEMS: readonly SystemName[] = ['raw', 'bare', 'floor', 'design-floor', 'switchyard'];

export const SYSTEM_TITLES: Record<SystemName, string> = {
  raw: 'raw ceiling (undici → receiver)',
  bare: 'bare Temporal (no-op activity)',
  floor: 'empty workflow started like a delivery',
  'design-floor': 'the same workflow calling one no-op local activity',
  switchyard: 'Switchyard (API → workflow → webhook)',
  plain: 'Switchyard without payload encryption',
  unarchived: 'Switchyard without the archive',
  limited: 'Switchyard to a rate-limited destination',
  governed: 'Switchyard with consent and 10 destination filters',
  mapped: 'Switchyard to an Actions destination with two mappings',
  planned: 'Switchyard with a 50-rule tracking plan',
  inserted: 'Switchyard to a webhook destination with an insert function',
  scripted: 'Switchyard to a destination function (its fetch delivers)',
};
