/**
 * Consent per destination, as Segment's Consent Management decides it: the categories a
 * destination needs, and what to do with a message that carries no preferences at all.
 */
export interface ConsentSettings {
  /** Consent category ids; every one must be granted. Empty: the destination needs no consent. */
  categories: string[];
  /** Segment delivers a message without preferences; "drop" lets a site fail closed instead. */
  whenAbsent: 'deliver' | 'drop';
}

/** The track Segment's consent wrappers send when a visitor changes their consent. */
export const CONSENT_PREFERENCE_EVENT = 'Segment Consent Preference Updated';

/**
 * Whether the message is the consent change itself. Segment sends it "regardless of an end-user's
 * consent preferences" (Consent in Unify, "Sharing consent with Actions destinations"): a
 * destination whose category it revokes must hear of the revocation to stop processing, or to
 * delete what it holds. Only the consent rule lets it by; integrations, suppression and filters apply.
 */
export const isConsentChange = (message: Record<string, unknown>) => message.type === 'track' && message.event === CONSENT_PREFERENCE_EVENT;

export const DEFAULT_CONSENT: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
export const MAX_CONSENT_CATEGORIES = 20;
export const MAX_CONSENT_CATEGORY_LENGTH = 100;

/**
 * Whether a message may reach a destination under its consent settings. Preferences are the
 * message's `context.consent.categoryPreferences`: a category counts as granted only when it is
 * literally `true` there (so `{}` grants nothing). A message without them is delivered unless the
 * destination says `whenAbsent: "drop"`. Preferences that are present but not an object grant
 * nothing: a malformed consent is never read as "no consent given, deliver".
 */
export function consentAllows(message: Record<string, unknown>, consent: ConsentSettings): boolean {
  const preferences = categoryPreferences(message);
  if (preferences === undefined) return consent.whenAbsent === 'deliver';
  return consent.categories.every((category) => preferences !== null && preferences[category] === true);
}

/** undefined: absent; null: present but not an object; otherwise the preferences. */
export function categoryPreferences(message: Record<string, unknown>): Record<string, unknown> | null | undefined {
  const context = message.context;
  if (context === null || typeof context !== 'object') return undefined;
  const consent = (context as Record<string, unknown>).consent;
  if (consent === null || typeof consent !== 'object') return undefined;
  const preferences = (consent as Record<string, unknown>).categoryPreferences;
  if (preferences === undefined) return undefined;
  if (preferences === null || typeof preferences !== 'object' || Array.isArray(preferences)) return null;
  return preferences as Record<string, unknown>;
}
