/**
 * Why a destination gets no delivery for a message: the first rule of the decision that
 * stopped it, and the word the overview, the metric, the portal and the docs use for it.
 * `trigger`: no enabled mapping of an actions destination has a trigger the message meets.
 * `plan`: the source's tracking plan blocked the message, for every destination at once.
 * `transformation`: a transformation with `drop` matched it (source-scoped: for every destination).
 */
export const STOP_REASONS = ['plan', 'integrations', 'consent', 'suppressed', 'filters', 'sampled', 'transformation', 'trigger'] as const;
export type StopReason = (typeof STOP_REASONS)[number];
