/**
 * Why a destination gets no delivery for a message (issue 30): the first rule of the decision that
 * stopped it, and the word the overview, the metric, the portal and the docs use for it.
 */
export const STOP_REASONS = ['integrations', 'consent', 'suppressed', 'filters', 'sampled'] as const;
export type StopReason = (typeof STOP_REASONS)[number];
