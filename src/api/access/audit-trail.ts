import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../access/scopes';
import type { AuditEntry, AuditRecord, Store } from '../../store/types';
import { PayloadReadsRecorded } from './payload-reads';
import { routeAccess } from './route-access';

/** Who made each authorized request (set by authorize.ts before any handler runs). */
const ACTORS = new WeakMap<FastifyRequest, Actor>();
/** From where: the address the failure limiter counts (client-address.ts), not the client-chosen request.ip. */
const ADDRESSES = new WeakMap<FastifyRequest, string>();

export function rememberActor(request: FastifyRequest, actor: Actor, address?: string): void {
  ACTORS.set(request, actor);
  if (address !== undefined) ADDRESSES.set(request, address);
}

export function actorOf(request: FastifyRequest): Actor {
  const actor = ACTORS.get(request);
  if (!actor) throw new Error(`${request.method} ${request.routeOptions.url}: no actor; is the route behind the access check?`);
  return actor;
}

/** The names of the fields a request body sets, never their values (a secret's name is fine, its value never). */
export const changedFields = (body: unknown): string[] => (body && typeof body === 'object' ? Object.keys(body).sort() : []);

function entryOf(request: FastifyRequest, actor: Pick<Actor, 'tokenId' | 'name'> | undefined, fields: Pick<AuditEntry, 'action' | 'target' | 'outcome' | 'changed'>, address?: string): AuditEntry {
  const ip = address ?? ADDRESSES.get(request) ?? request.ip;
  return { at: new Date().toISOString(), actor: { tokenId: actor?.tokenId ?? null, name: actor?.name ?? null }, requestId: String(request.id), ip, ...fields };
}

/** The row as one JSON log line, beside the table, for log pipelines (it holds no value, so it may be logged). */
const logged = (request: FastifyRequest, record: AuditRecord) => request.log.info({ audit: record }, 'audit');

function actionOf(request: FastifyRequest): string {
  const action = routeAccess(request.method, request.routeOptions.url)?.action;
  if (!action) throw new Error(`${request.method} ${request.routeOptions.url}: a change with no audit action in route-access.ts`);
  return action;
}

export interface Change<T> {
  /** What was changed: an id, or made from the result (a created record's new id). */
  target: string | ((result: NonNullable<T>) => string);
  /** Field names; default: the request body's. */
  changed?: string[];
  /** Default: the route's (route-access.ts); another only to record an undo. */
  action?: string;
}

/**
 * An admin change and its audit row, in one transaction: both or neither. A result of
 * undefined or false means nothing was there to change (the route answers 404) and writes no row.
 */
export async function audited<T>(store: Store, request: FastifyRequest, work: (tx: Store) => Promise<T>, change: Change<T>): Promise<T> {
  const action = change.action ?? actionOf(request);
  const actor = actorOf(request);
  let record: AuditRecord | undefined;
  const result = await store.transaction(async (tx) => {
    const done = await work(tx);
    if (done === undefined || done === null || done === false) return done;
    const target = typeof change.target === 'function' ? change.target(done) : change.target;
    record = await tx.audit.append(entryOf(request, actor, { action, target, outcome: 'success', changed: change.changed ?? changedFields(request.body) }));
    return done;
  });
  if (record) logged(request, record);
  return result;
}

/**
 * The audit row of a change made outside the store (a Temporal workflow started: a redelivery, a
 * sync), written once the change is made; there is no store transaction for it to join.
 */
export async function recordChange(store: Store, request: FastifyRequest, target: string, changed: string[] = changedFields(request.body)): Promise<void> {
  logged(request, await store.audit.append(entryOf(request, actorOf(request), { action: actionOf(request), target, outcome: 'success', changed })));
}

/** A refused request (401, 403): recorded under the route's action, or its method and URL when it changes nothing. */
export async function recordDenied(audit: Pick<Store['audit'], 'append'>, request: FastifyRequest, actor: Pick<Actor, 'tokenId' | 'name'> | undefined, address?: string): Promise<void> {
  const url = request.routeOptions.url ?? request.url.split('?')[0];
  const action = routeAccess(request.method, url)?.action ?? `${request.method} ${url}`;
  const params = (request.params ?? {}) as Record<string, string | undefined>;
  const target = params.id ?? params.sourceId ?? null;
  try {
    logged(request, await audit.append(entryOf(request, actor, { action, target, outcome: 'denied', changed: [] }, address)));
  } catch (err) {
    request.log.warn({ err: (err as Error).message }, 'could not record a denied admin request in the audit log');
  }
}

/** One window of payload reads per audit log (per store, so per API process). */
const PAYLOAD_READS = new WeakMap<object, PayloadReadsRecorded>();

/**
 * A read of decrypted payloads: `payload.read` (a delivery's detail with its
 * message) or `payload.decode` (the codec server), recorded once per token, action and target a
 * minute (payload-reads.ts). A row that cannot be written is logged and does not fail the read.
 * `npm start`'s token-less codec over loopback has no actor: its rows have none.
 */
export async function recordPayloadRead(audit: Pick<Store['audit'], 'append'>, request: FastifyRequest, action: 'payload.read' | 'payload.decode', target: string | null, now = Date.now()): Promise<void> {
  const actor = ACTORS.get(request);
  let reads = PAYLOAD_READS.get(audit);
  if (!reads) PAYLOAD_READS.set(audit, (reads = new PayloadReadsRecorded()));
  if (!reads.due(actor?.tokenId ?? null, action, target, now)) return;
  try {
    logged(request, await audit.append(entryOf(request, actor, { action, target, outcome: 'success', changed: [] })));
  } catch (err) {
    request.log.warn({ err: (err as Error).message }, 'could not record a payload read in the audit log');
  }
}
