/** The admin API as the portal calls it: same Bearer token, JSON both ways. */
import type { AttemptRecord, DestinationAttempts } from '../../ports';
import type { Mapping } from './mapping-fields';

export type { Mapping };

const TOKEN_KEY = 'switchyard.adminToken';

/** sessionStorage: gone when the tab closes, never in a URL, a cookie or a log. */
export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** An error reply of the admin API: `{code, message}` with its HTTP status. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown, bearer = token.get()): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    const error = (json ?? {}) as { code?: string; message?: string };
    throw new ApiFailure(response.status, error.code ?? 'error', error.message ?? `${method} ${path} answered ${response.status}`);
  }
  return json as T;
}

export interface Source {
  id: string;
  name: string;
  writeKeyHint: string;
  createdAt: string;
}
export interface Webhook {
  url: string;
  headerNames: string[];
  disabled?: { reason: string; at: string };
  backpressure?: { until: string; reason: string };
}
export interface Destination {
  id: string;
  sourceId: string;
  name: string;
  enabled: boolean;
  sharedSecretSet: boolean;
  signingSecretSet: boolean;
  previousSigningSecretUntil?: string;
  webhooks: Webhook[];
  maxRequestsPerSecond: number | null;
  paused: boolean;
  pausedAt?: string;
  consent: { categories: string[]; whenAbsent: 'deliver' | 'drop' };
  /** `webhooks` or `actions`; an actions destination lists its mappings (header values masked). */
  type?: 'webhooks' | 'actions';
  mappings?: Mapping[];
  auth?: { type: string } & Record<string, string>;
  tlsSet?: boolean;
  createdAt: string;
}
export type FunctionKind = 'SOURCE' | 'DESTINATION' | 'INSERT_DESTINATION';
/** A function as `GET /admin/functions` lists it (no code, no settings). */
export interface FunctionItem {
  id: string;
  resourceType: FunctionKind;
  displayName: string;
  description: string | null;
  latestVersion: number;
  deployedVersion: number;
  updatedAt: string;
}
export type DeliveryStatus = 'delivering' | 'retrying' | 'delivered' | 'failed' | 'stopped';
export interface DeliveryRow {
  messageId: string;
  sourceId: string;
  type: string;
  userId?: string;
  status: DeliveryStatus;
  startedAt: string;
  closedAt?: string;
  workflowId: string;
  runId: string;
}
/** One call's decision for one destination, as GET /admin/fates answers it (ids and event only with payloads:read). */
export interface FateRow {
  messageId: string;
  sourceId: string;
  sourceName: string;
  destinationId: string;
  destinationName: string;
  type: string;
  receivedAt: string;
  decision: string;
  status: DeliveryStatus;
  reason?: string;
  filterId?: string;
  userId?: string;
  anonymousId?: string;
  event?: string;
}
/** An attempt as delivery detail answers it: the API's record, its sealed logs opened or left out. */
export type Attempt = Omit<AttemptRecord, 'sealedLogs'>;
export interface DeliveryDetail extends DeliveryRow {
  redelivery?: { requestedAt: string; previousRunId: string };
  /** Absent for a token without payloads:read. */
  message?: Record<string, unknown> | string;
  destinations: (Omit<DestinationAttempts, 'attempts'> & { attempts: Attempt[] })[];
}
export interface Computation {
  id: string;
  sourceId: string;
  name: string;
  key: string;
  definition: unknown;
  schedule: string;
  paused: boolean;
  scheduleId: string;
  lastSync: { version: number; syncedAt: string } | null;
  pendingSync: { version: number; computedAt: string; changes: number } | null;
}
export interface PortalSettings {
  temporalUiUrl: string;
  temporalNamespace: string;
  publicUrl: string;
  /** The logged-in token; id null for the bootstrap ADMIN_TOKEN. */
  token: { id: string | null; name: string; scopes: string[] };
}
/** A row of GET /admin/audit. */
export type { AuditRecord as AuditEntry } from '../../access/audit-entry';
