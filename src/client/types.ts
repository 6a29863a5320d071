/**
 * The messages a program hands to the client, and the JSON the client sends for them.
 * Field names follow Segment's Tracking API, which is what Switchyard's ingestion API speaks.
 */

/** Free-form attributes; any value `JSON.stringify` accepts (a Date becomes its ISO string). */
export type Attributes = Record<string, unknown>;

/** Seed, "Selecting destinations": case-sensitive destination names; `All: false` turns off all but those set true. */
export interface Integrations {
  All?: boolean;
  /** `true`/`false`, or an object of destination-specific options (which counts as enabled). */
  [destination: string]: boolean | Attributes | undefined;
}

/** Information about the device, app and request that is not an attribute of the user (seed: device, os, app). */
export interface Context {
  ip?: string;
  userAgent?: string;
  locale?: string;
  device?: { model?: string; type?: string; [key: string]: unknown };
  os?: { name?: string; version?: string; [key: string]: unknown };
  app?: { build?: string; name?: string; version?: string; [key: string]: unknown };
  library?: { name: string; version: string };
  [key: string]: unknown;
}

/** Properties of a page view: the seed's recognized keys, custom keys allowed. */
export interface PageProperties extends Attributes {
  url?: string;
  title?: string;
  referrer?: string;
  path?: string;
}

/** Every call but alias must say who it is about: a known user, an anonymous visitor, or both. */
export type Identity =
  | { userId: string; anonymousId?: string }
  | { userId?: string; anonymousId: string };

/** Fields every call accepts. */
export interface CommonFields {
  context?: Context;
  integrations?: Integrations;
  /** When it happened. Omit for "now"; set it to import historical data. Date or ISO 8601 with a time zone. */
  timestamp?: Date | string;
  /** Unique id the server uses to drop duplicates. Filled with a random UUID when omitted. */
  messageId?: string;
}

export type IdentifyMessage = Identity & CommonFields & { traits?: Attributes };
export type TrackMessage = Identity & CommonFields & { event: string; properties?: Attributes };
export type PageMessage = Identity & CommonFields & { name?: string; category?: string; properties?: PageProperties };
export type ScreenMessage = Identity & CommonFields & { name?: string; category?: string; properties?: Attributes };
export type GroupMessage = Identity & CommonFields & { groupId: string; traits?: Attributes };
export type AliasMessage = CommonFields & {
  /** The new identity. */
  userId: string;
  /** The identity being aliased from (often the anonymous id used before sign-up). */
  previousId: string;
};

export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

export interface MessageInputs {
  identify: IdentifyMessage;
  track: TrackMessage;
  page: PageMessage;
  screen: ScreenMessage;
  group: GroupMessage;
  alias: AliasMessage;
}

/** One message as it travels in `POST /v1/batch`: `type`, `messageId`, `timestamp` and `context.library` always set. */
export interface Message {
  type: MessageType;
  messageId: string;
  timestamp: string;
  context: Context;
  userId?: string;
  anonymousId?: string;
  integrations?: Integrations;
  traits?: Attributes;
  event?: string;
  properties?: Attributes;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
}

/** The body of one request; `sentAt` is stamped per attempt so the server can correct clock skew. */
export interface BatchBody {
  batch: Message[];
  sentAt: string;
}
