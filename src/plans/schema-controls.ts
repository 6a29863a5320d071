/**
 * A source's schema controls, in the shape of Segment's Public API
 * (`updateSchemaSettingsInSourceV1Input`). The defaults allow everything, as on Segment: a plan
 * connected to a source reports violations and blocks nothing until someone decides to block.
 */

export const TRACK_COMMON = ['ALLOW', 'BLOCK', 'OMIT_PROPERTIES'] as const;
export const TRAITS_COMMON = ['ALLOW', 'BLOCK', 'OMIT_TRAITS'] as const;

export interface TrackControls {
  allowUnplannedEvents: boolean;
  allowUnplannedEventProperties: boolean;
  allowEventOnViolations: boolean;
  allowPropertiesOnViolations: boolean;
  commonEventOnViolations: (typeof TRACK_COMMON)[number];
}

export interface TraitsControls {
  allowUnplannedTraits: boolean;
  allowTraitsOnViolations: boolean;
  commonEventOnViolations: (typeof TRAITS_COMMON)[number];
}

export interface SchemaControls {
  track: TrackControls;
  identify: TraitsControls;
  group: TraitsControls;
  /** A source each violation is sent into as a `Violation Generated` track. */
  forwardingViolationsTo?: string;
  /** A source each blocked event is sent into, unchanged. */
  forwardingBlockedEventsTo?: string;
}

export const DEFAULT_TRACK: TrackControls = {
  allowUnplannedEvents: true,
  allowUnplannedEventProperties: true,
  allowEventOnViolations: true,
  allowPropertiesOnViolations: true,
  commonEventOnViolations: 'ALLOW',
};
export const DEFAULT_TRAITS: TraitsControls = { allowUnplannedTraits: true, allowTraitsOnViolations: true, commonEventOnViolations: 'ALLOW' };
export const DEFAULT_CONTROLS: SchemaControls = { track: DEFAULT_TRACK, identify: DEFAULT_TRAITS, group: DEFAULT_TRAITS };

/** What a PATCH may carry: any part of any section; `null` clears a forwarding source. */
export interface SchemaControlsPatch {
  track?: Partial<TrackControls>;
  identify?: Partial<TraitsControls>;
  group?: Partial<TraitsControls>;
  forwardingViolationsTo?: string | null;
  forwardingBlockedEventsTo?: string | null;
}

/** The controls after a PATCH: each setting given replaces that one setting, every other stays as it was. */
export function patchControls(current: SchemaControls, patch: SchemaControlsPatch): SchemaControls {
  const next: SchemaControls = {
    track: { ...current.track, ...patch.track },
    identify: { ...current.identify, ...patch.identify },
    group: { ...current.group, ...patch.group },
  };
  for (const key of ['forwardingViolationsTo', 'forwardingBlockedEventsTo'] as const) {
    const value = patch[key] === undefined ? current[key] : patch[key];
    if (value !== null && value !== undefined) next[key] = value;
  }
  return next;
}

/** Saved controls read back: whatever an older version saved is completed with today's defaults. */
export function controlsFrom(saved: Partial<SchemaControls> | undefined): SchemaControls {
  return patchControls(DEFAULT_CONTROLS, saved ?? {});
}
