import { AnalyticsError, invalidMessage } from './errors';
import { integrationsProblem, isPlainObject } from './integrations';
import { MAX_ID_LENGTH, MAX_MESSAGE_BYTES, MAX_MESSAGE_ID_LENGTH, MAX_NAME_LENGTH } from './limits';
import type { Context, Message, MessageType } from './types';

export type Prepared<T> = { ok: true; value: T } | { ok: false; error: AnalyticsError };

/** What `prepareMessage` fills in when the caller did not: injected so the rules stay pure. */
export interface Stamp {
  now: () => Date;
  newMessageId: () => string;
  library: { name: string; version: string };
}

/** ISO 8601 date-time with a time zone, as the ingestion API requires (`Date.parse` alone accepts "March 7"). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

const absent = (value: unknown) => value === undefined || value === null;

/**
 * Checks a call against the seed's rules and turns it into the message that is sent: only the
 * fields the Tracking API defines, messageId and timestamp filled, timestamp as ISO 8601 UTC.
 * The first broken rule is reported, naming the field.
 */
export function prepareMessage(type: MessageType, input: unknown, stamp: Stamp): Prepared<Message> {
  const fail = (field: string, rule: string): Prepared<Message> => ({ ok: false, error: invalidMessage(field, rule) });
  if (!isRecord(input)) return fail('message', `${type} expects an object`);

  const text = (field: string, max: number, required: string | undefined): string | undefined | Error => {
    const value = input[field];
    if (absent(value) || value === '') return required ? new Error(required) : undefined;
    if (typeof value !== 'string') return new Error(`must be a string, got ${describe(value)}`);
    if (value.length > max) return new Error(`must be at most ${max} characters, got ${value.length}`);
    return value;
  };
  const fields: Record<string, string | undefined> = {};
  const rules: [string, number, string | undefined][] = [
    ['userId', MAX_ID_LENGTH, type === 'alias' ? 'is required for alias calls (the new identity)' : undefined],
    ['anonymousId', MAX_ID_LENGTH, undefined],
    ['messageId', MAX_MESSAGE_ID_LENGTH, undefined],
    ['event', MAX_NAME_LENGTH, type === 'track' ? 'is required for track calls (the event name)' : undefined],
    ['name', MAX_NAME_LENGTH, undefined],
    ['category', MAX_NAME_LENGTH, undefined],
    ['groupId', MAX_ID_LENGTH, type === 'group' ? 'is required for group calls' : undefined],
    ['previousId', MAX_ID_LENGTH, type === 'alias' ? 'is required for alias calls (the identity aliased from)' : undefined],
  ];
  for (const [field, max, required] of rules) {
    const value = text(field, max, required);
    if (value instanceof Error) return fail(field, value.message);
    fields[field] = value;
  }
  if (type !== 'alias' && fields.userId === undefined && fields.anonymousId === undefined) {
    return fail('userId', `userId or anonymousId is required for ${type} calls`);
  }

  for (const field of ['traits', 'properties', 'context'] as const) {
    if (!absent(input[field]) && !isRecord(input[field])) return fail(field, `must be an object, got ${describe(input[field])}`);
  }
  if (!absent(input.integrations)) {
    const problem = integrationsProblem(input.integrations);
    if (problem) return fail(problem.key === undefined ? 'integrations' : `integrations.${problem.key}`, problem.rule);
  }

  let timestamp: string;
  if (absent(input.timestamp)) {
    timestamp = stamp.now().toISOString();
  } else {
    const parsed = parseTimestamp(input.timestamp);
    if (parsed === undefined) return fail('timestamp', 'must be a valid Date or an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00.000Z');
    timestamp = parsed;
  }

  const context: Context = { ...(input.context as Context | undefined), library: (input.context as Context | undefined)?.library ?? stamp.library };
  const message = withoutEmpty<Message>({
    type,
    messageId: fields.messageId ?? stamp.newMessageId(),
    timestamp,
    userId: fields.userId,
    anonymousId: fields.anonymousId,
    event: fields.event,
    name: fields.name,
    category: fields.category,
    groupId: fields.groupId,
    previousId: fields.previousId,
    traits: input.traits as Message['traits'],
    properties: input.properties as Message['properties'],
    context,
    integrations: input.integrations as Message['integrations'],
  });
  return { ok: true, value: message };
}

/** A message encoded once, at enqueue: the snapshot that is sent, whatever the caller mutates later. */
export interface Encoded {
  json: string;
  bytes: number;
}

/** Encodes a message and applies the seed's 32 KB per-call limit to what would actually be sent. */
export function encodeMessage(message: Message): Prepared<Encoded> {
  let json: string;
  try {
    json = JSON.stringify(message);
  } catch (err) {
    return { ok: false, error: invalidMessage('message', `cannot be encoded as JSON (${(err as Error).message.split('\n')[0]})`) };
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) {
    return {
      ok: false,
      error: new AnalyticsError('message_too_large', `message ${message.messageId} is ${bytes} bytes encoded; a message may be at most ${MAX_MESSAGE_BYTES} bytes (32 KB)`, { size: bytes }),
    };
  }
  return { ok: true, value: { json, bytes } };
}

function parseTimestamp(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Objects of attributes: plain objects, or class instances whose own fields JSON carries. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) || (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date));
}

/** Drops absent optional fields, so they are not sent as `null`. */
function withoutEmpty<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null)) as T;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${JSON.stringify(value)}`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
