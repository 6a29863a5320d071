import { createHash } from 'node:crypto';
import type { Message } from '../delivery/payload';
import type { Call } from '../messages/call';
import type { Violation } from './violations';

/**
 * The calls Segment's forwarding makes, as plain calls for another source's
 * ingestion. Their messageIds are derived from the original, so a sender's retry of the same
 * request forwards nothing twice (the workflow id `message:<source>:<messageId>` dedupes).
 */

/** Segment's fixed userId of forwarded violations. */
export const VIOLATIONS_USER_ID = 'schema-violations';
export const VIOLATION_EVENT = 'Violation Generated';

/** `sch-<hash>` of the original message and the violation (field and type): the same violation of the same message, the same id. */
export function violationMessageId(messageId: string, violation: Pick<Violation, 'field' | 'violationType'>): string {
  return `sch-${createHash('sha256').update(JSON.stringify([messageId, violation.field, violation.violationType])).digest('hex').slice(0, 32)}`;
}

/**
 * A blocked event, unchanged, for the blocked-events source: its own messageId (the other source's
 * workflow ids keep it apart from the original's), its timestamp as corrected at the first ingest
 * (no sentAt, so it is not corrected twice).
 */
export function blockedEventCall(message: Message, integrations: Record<string, unknown> | undefined): Call {
  const { receivedAt: _receivedAt, ...fields } = message;
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return { type: message.type, fields: { ...defined, ...(integrations && { integrations }) } };
}

export interface ViolationOrigin {
  sourceId: string;
  sourceName: string;
  plan: { id: string; name: string };
}

/** A source's name as Segment's `sourceSlug`: lower case, every run of other characters a `-`, at most 100 characters. */
export function sourceSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/, '');
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One `track("Violation Generated")` with Segment's property names: `eventSentAt` is the call's own
 * sentAt (else its batch's), `appVersion` the original's `context.app.version`, and the original's
 * `context.app` and `context.library` ride in its context as Segment's do.
 */
export function violationEventCall(message: Message, violation: Violation, origin: ViolationOrigin, sentAt: string | undefined): Call {
  const context = isObject(message.context) ? message.context : {};
  const app = isObject(context.app) ? context.app : undefined;
  const library = isObject(context.library) ? context.library : undefined;
  const appVersion = app && typeof app.version === 'string' ? app.version : null;
  return {
    type: 'track',
    fields: {
      userId: VIOLATIONS_USER_ID,
      messageId: violationMessageId(message.messageId, violation),
      event: VIOLATION_EVENT,
      properties: {
        eventMessageID: message.messageId,
        eventName: message.event ?? message.name ?? '',
        eventType: message.type,
        eventSentAt: sentAt ?? null,
        appVersion,
        eventTimestamp: message.timestamp,
        sourceID: origin.sourceId,
        sourceName: origin.sourceName,
        sourceSlug: sourceSlug(origin.sourceName),
        trackingPlanID: origin.plan.id,
        trackingPlanName: origin.plan.name,
        violationDescription: violation.description,
        violationField: violation.field,
        violationType: violation.violationType,
      },
      context: { ...(app && { app }), ...(library && { library }), protocols: { forwardedFrom: origin.sourceId } },
    },
  };
}
