import { outcomeEntry, type DestinationOutcome } from '../delivery/destination-outcomes';
import type { RedeliveryJob } from '../delivery/redelivery-job';
import type { DeliveryFilter, DeliveryStatusName } from '../ports';
import type { Keyring } from '../privacy/keyring';
import { visibleId } from '../privacy/visible-ids';
import { ANONYMOUS_ID, DESTINATIONS, MESSAGE_TYPE, OUTCOMES, SOURCE, STATUS, USER_ID } from '../workflows/search-attributes';

/**
 * Delivery filters as a Temporal visibility query. The API validates every value first (ids by
 * their shape, times as dates); this module checks them again and quotes every string, so a value
 * can never end its literal and add a clause of its own.
 */

/** What the store's newId makes: `src_` / `dst_` and 32 hex digits. */
export const SOURCE_ID_PATTERN = '^src_[0-9a-f]{32}$';
export const DESTINATION_ID_PATTERN = '^dst_[0-9a-f]{32}$';

export class UnsafeFilterError extends Error {}

/**
 * A visibility string literal. Values with a double quote, a backslash or a control character are
 * refused rather than escaped: Temporal's SQL visibility (the dev server's SQLite) matched none of
 * `\"`-escaped or single-quoted forms of a stored value with a double quote, and took a backslash
 * literally, so an escape could neither find such a value nor be relied on to keep it a value.
 */
export function visibilityLiteral(value: string): string {
   
  if (/["\\\u0000-\u001f\u007f]/.test(value)) throw new UnsafeFilterError('a filter value may not contain a double quote, a backslash or a control character');
  return `"${value}"`;
}

/**
 * A cursor: what a page needs to go on, sealed with the query it pages, as base64url JSON. A cursor
 * from other filters, or not made here, is refused before it reaches the server (which retries a
 * token it cannot read until the call's deadline instead of refusing it).
 */
export function sealCursor(query: string, fields: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ query, ...fields })).toString('base64url');
}

/** The fields of a cursor sealCursor made for this query; undefined for any other text. */
export function openCursor(cursor: string, query: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { query: madeFor, ...fields } = parsed as Record<string, unknown>;
  return madeFor === query ? fields : undefined;
}

/** A cursor holding only Temporal's page token (a bulk redelivery job's pages). */
export function encodeCursor(query: string, token: Uint8Array): string {
  return sealCursor(query, { token: Buffer.from(token).toString('base64') });
}

/** The page token inside a cursor made by encodeCursor for this query; undefined for any other text. */
export function decodeCursor(cursor: string, query: string): Uint8Array | undefined {
  const token = openCursor(cursor, query)?.token;
  return typeof token === 'string' && token !== '' ? Buffer.from(token, 'base64') : undefined;
}

function matching(value: string, pattern: string, field: string): string {
  if (!new RegExp(pattern).test(value)) throw new UnsafeFilterError(`${field} does not have the shape of an id`);
  return visibilityLiteral(value);
}

function time(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new UnsafeFilterError(`${field} is not a date-time`);
  return `"${new Date(ms).toISOString()}"`;
}

/** What SwitchyardStatus says while a delivery is under way; a completed run left at either was delivered. */
const UNDER_WAY: DeliveryStatusName[] = ['delivering', 'retrying'];

/**
 * A delivery's status as the API shows it: the workflow's own SwitchyardStatus, except for runs
 * Temporal ended without the workflow writing a last status (terminated by a regulation or an
 * operator: stopped; past the execution timeout, the hard retry window: failed) and for a delivery
 * that succeeded, which writes none (policy.deliveredImplied): a completed run whose
 * SwitchyardStatus is still under way is delivered.
 */
export function deliveryStatus(attribute: string | undefined, execution: string): DeliveryStatusName {
  if (execution === 'TERMINATED' || execution === 'CANCELLED' || execution === 'CANCELED') return 'stopped';
  if (execution === 'TIMED_OUT') return 'failed';
  if (execution === 'COMPLETED' && (attribute === undefined || (UNDER_WAY as string[]).includes(attribute))) return 'delivered';
  const known: DeliveryStatusName[] = ['delivering', 'retrying', 'delivered', 'failed', 'stopped'];
  if (attribute && (known as string[]).includes(attribute)) return attribute as DeliveryStatusName;
  return execution === 'RUNNING' ? 'delivering' : execution === 'FAILED' ? 'failed' : 'delivered';
}

/**
 * The same rule as deliveryStatus, as a clause: ExecutionStatus names are Temporal's (Running,
 * TimedOut…). The same text works on the dev server's SQLite and Temporal's PostgreSQL visibility.
 */
export function statusClause(status: DeliveryStatusName): string {
  const attribute = `${STATUS.name} = "${status}"`;
  switch (status) {
    case 'delivering':
    case 'retrying':
      return `(${attribute} AND ExecutionStatus = "Running")`;
    case 'delivered':
      return `(${attribute} OR (ExecutionStatus = "Completed" AND ${STATUS.name} IN (${UNDER_WAY.map((name) => `"${name}"`).join(', ')})))`;
    case 'failed':
      return `(${attribute} OR ExecutionStatus = "TimedOut")`;
    case 'stopped':
      return `(${attribute} OR ExecutionStatus IN ("Terminated", "Canceled"))`;
    default:
      throw new UnsafeFilterError('status is not a delivery status');
  }
}

/**
 * The deliveries whose outcome at one destination is `outcome`, from SwitchyardOutcomes.
 * An entry still `retrying` (a single destination's always is: its outcome is the run's, and its
 * history has no upsert for it) is read by how Temporal ended the run, as deliveryStatus reads
 * SwitchyardStatus: running is retrying; terminated (a regulation, an operator) or cancelled is
 * stopped, and so is a completed run whose last status is stopped; timed out (the hard retry window)
 * or failed is failed; any other completed run is delivered. Each run counts under one outcome.
 */
export function outcomeClause(destinationId: string, outcome: DestinationOutcome, replay: boolean): string {
  const entry = (name: DestinationOutcome) => `${OUTCOMES.name} = ${visibilityLiteral(outcomeEntry(name, destinationId, replay))}`;
  const endedStill = (executions: string[]) => `(${entry('retrying')} AND ExecutionStatus IN (${executions.map((e) => `"${e}"`).join(', ')}))`;
  switch (outcome) {
    case 'retrying':
      return `(${entry('retrying')} AND ExecutionStatus = "Running")`;
    case 'delivered':
      return `(${entry('delivered')} OR (${entry('retrying')} AND ExecutionStatus = "Completed" AND ${STATUS.name} != "stopped"))`;
    case 'failed':
      return `(${entry('failed')} OR ${endedStill(['Failed', 'TimedOut'])})`;
    case 'stopped':
      return `(${entry('stopped')} OR ${endedStill(['Terminated', 'Canceled'])} OR (${entry('retrying')} AND ExecutionStatus = "Completed" AND ${STATUS.name} = "stopped"))`;
    default:
      throw new UnsafeFilterError('outcome is not a destination outcome');
  }
}

const TYPES = new Set(['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete']);

/**
 * `keyring`: the userId filter matches SwitchyardUserId's keyed hash, so any userId is
 * searchable, quotes and backslashes included; without keys (PAYLOAD_ENCRYPTION=off) it matches the
 * plaintext attribute, and such a userId is refused (visibilityLiteral).
 */
export function deliveryQuery(filter: Omit<DeliveryFilter, 'limit' | 'cursor'>, keyring: Keyring | undefined): string {
  const clauses = ['WorkflowType = "deliverMessage"'];
  if (filter.sourceId !== undefined) clauses.push(`${SOURCE.name} = ${matching(filter.sourceId, SOURCE_ID_PATTERN, 'sourceId')}`);
  if (filter.destinationId !== undefined) {
    const destinationId = matching(filter.destinationId, DESTINATION_ID_PATTERN, 'destinationId');
    clauses.push(filter.outcome ? outcomeClause(filter.destinationId, filter.outcome.outcome, filter.outcome.replay) : `${DESTINATIONS.name} = ${destinationId}`);
  } else if (filter.outcome) throw new UnsafeFilterError('outcome needs a destinationId');
  if (filter.status !== undefined && !filter.outcome) clauses.push(statusClause(filter.status));
  if (filter.type !== undefined) {
    if (!TYPES.has(filter.type)) throw new UnsafeFilterError('type is not a message type');
    clauses.push(`${MESSAGE_TYPE.name} = "${filter.type}"`);
  }
  if (filter.userId !== undefined) clauses.push(`${USER_ID.name} = ${visibilityLiteral(visibleId(keyring, 'userId', filter.userId))}`);
  if (filter.since !== undefined) clauses.push(`StartTime >= ${time(filter.since, 'since')}`);
  if (filter.until !== undefined) clauses.push(`StartTime < ${time(filter.until, 'until')}`);
  return clauses.join(' AND ');
}

/** Ids per query: each appears up to four times (two hashes, two plaintext forms), and a query string has a size limit. */
export const USER_IDS_PER_QUERY = 50;

/** What visibilityLiteral takes as it is. */
 
const QUOTABLE = /^[^"\\\u0000-\u001f\u007f]*$/;

/**
 * The visibility queries that find a regulation's deliveries: those made under any of these ids as
 * user id or anonymous id, delete notifications excepted (they are the record that the receivers
 * were told). With keys, each id is matched by its keyed hashes, so an id with a quote, a backslash
 * or any other character is found; its plaintext form is matched too when it can be quoted, so
 * deliveries started before the keys (plaintext attributes) are still stopped and deleted. Without
 * keys an id that cannot be quoted cannot be matched either, and is left out rather than escaped
 * into a query of its own (visibilityLiteral).
 */
export function userDeliveryQueries(ids: string[], keyring: Keyring | undefined): string[] {
  const queries: string[] = [];
  for (let i = 0; i < ids.length; i += USER_IDS_PER_QUERY) {
    const part = ids.slice(i, i + USER_IDS_PER_QUERY);
    const plain = part.filter((id) => QUOTABLE.test(id));
    const userValues = [...new Set([...(keyring ? part.map((id) => visibleId(keyring, 'userId', id)) : []), ...plain])];
    const anonymousValues = [...new Set([...(keyring ? part.map((id) => visibleId(keyring, 'anonymousId', id)) : []), ...plain])];
    if (userValues.length === 0) continue;
    const list = (values: string[]) => values.map(visibilityLiteral).join(', ');
    queries.push(`(${USER_ID.name} IN (${list(userValues)}) OR ${ANONYMOUS_ID.name} IN (${list(anonymousValues)})) AND ${MESSAGE_TYPE.name} != "delete"`);
  }
  return queries;
}

/** The messageId inside a delivery workflow id `message:<sourceId>:<messageId>` (delivery/ids.ts). */
export function messageIdOf(workflowId: string, sourceId: string): string {
  const prefix = `message:${sourceId}:`;
  if (workflowId.startsWith(prefix)) return workflowId.slice(prefix.length);
  // A replayed delivery, `replay:<replayId>:<messageId>` (replay ids hold no colon).
  const replayed = /^replay:rpl_[0-9a-f]{32}:(.+)$/s.exec(workflowId);
  return replayed ? replayed[1] : workflowId;
}

/**
 * A bulk redelivery job's matching set, fixed when the job was made: closed runs only, closed by
 * `createdAt`. Closed runs never change in visibility, and the redeliveries the job starts begin
 * after `createdAt`, so paging this query while the job works neither skips nor repeats a run
 * (a plain `status = failed` query would change under the job as its redeliveries succeed).
 */
export function redeliverySnapshotQuery(job: Pick<RedeliveryJob, 'sourceId' | 'filter' | 'createdAt'>): string {
  const { status, since, until, destinationId } = job.filter;
  // No userId in a job's filter: no keyring needed.
  const base = deliveryQuery({ sourceId: job.sourceId, status, since, until, ...(destinationId !== undefined && { destinationId }) }, undefined);
  return `${base} AND ExecutionStatus != "Running" AND CloseTime <= ${time(job.createdAt, 'createdAt')}`;
}
