/**
 * An Actions destination's settings, in the shape Segment's Public API returns for a
 * Webhooks (Actions) subscription, and the outbound authentication any destination may carry.
 * Plain data only: the store, the API, the planner and the attempt activity share these.
 */

export const DESTINATION_TYPES = ['webhooks', 'actions', 'function'] as const;
/** `webhooks`: the seed's destination (the whole event, URLs tried in order); `actions`: mapped requests; `function`: a destination function's handler is the delivery. */
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** Segment: "up to five mappings" per Webhooks (Actions) destination. */
export const MAX_MAPPINGS = 5;
/** Segment's Webhooks (Actions) "Send" action: up to 5 static headers. */
export const MAX_MAPPING_HEADERS = 5;
export const MAPPING_METHODS = ['POST', 'PUT', 'PATCH'] as const;
export type MappingMethod = (typeof MAPPING_METHODS)[number];

/** Segment's default `data` for the Send action: the whole event. */
export const DEFAULT_MAPPING_DATA: Readonly<Record<string, unknown>> = { '@path': '$.' };

export interface MappingSettings {
  url: string;
  method: MappingMethod;
  headers: Record<string, string>;
  /** A mapping in Segment's mapping language (`@path`, `@template`, `@if`, …). */
  data: Record<string, unknown>;
}

/** One mapping: its trigger (an FQL condition) decides which messages it sends, its settings how. */
export interface ActionsMapping {
  name: string;
  enabled: boolean;
  trigger: string;
  settings: MappingSettings;
}

/** Outbound authentication to the receiver; every secret field is write-only. */
export type OutboundAuth =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'oauth2'; tokenUrl: string; clientId: string; clientSecret: string; scope?: string; audience?: string };

/** Mutual TLS to the receiver: the client certificate and its private key, PEM. */
export interface TlsSettings {
  certificate: string;
  privateKey: string;
}

/** What the API shows of the auth settings: everything but the secrets. */
export function authView(auth: OutboundAuth): { type: OutboundAuth['type'] } & Record<string, string> {
  switch (auth.type) {
    case 'bearer':
      return { type: 'bearer' };
    case 'basic':
      return { type: 'basic', username: auth.username };
    case 'oauth2': {
      const { clientSecret: _secret, ...shown } = auth;
      return shown;
    }
  }
}
