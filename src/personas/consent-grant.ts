/**
 * A profile's consent changed so that some category is granted now that was not before (or
 * preferences became known). While a category was withdrawn, the syncs sent the profile's audience
 * and trait changes to no destination needing it, yet moved the snapshot on: those destinations
 * hold a stale state. A grant therefore makes the next sync send the profile's current state again
 * (store/profiles.ts marks its snapshot rows stale). A withdrawal sends nothing new: the destinations
 * it revokes must not hear more, and the others are current.
 */
export function grantsMore(before: string | null, after: string | null): boolean {
  if (after === null || after === before) return false;
  const granted = (json: string | null): Record<string, unknown> => {
    if (json === null) return {};
    const parsed = JSON.parse(json) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  };
  const old = granted(before);
  // Preferences becoming known is a grant too: a destination that drops messages without them (whenAbsent "drop") had nothing.
  if (before === null) return true;
  return Object.entries(granted(after)).some(([category, value]) => value === true && old[category] !== true);
}

/**
 * What a snapshot row holds once its profile's consent was granted again: not JSON, so it equals no
 * computed value, and the next sync tells the profile its value now (or, no longer computed, that it left).
 */
export const STALE_AFTER_GRANT = 'stale: consent granted';
