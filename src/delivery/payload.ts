import type { CallType, MessageBody } from './types';

/** A call as accepted by the ingestion API: validated, with messageId, receivedAt and corrected timestamp filled. */
export interface Message {
  type: CallType;
  messageId: string;
  userId?: string;
  anonymousId?: string;
  timestamp: string;
  receivedAt: string;
  context: Record<string, unknown>;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  event?: string;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
  /**
   * The root fields the sender sent beyond those above, as sent (`channel`, `integrations`,
   * `_metadata`, unknown ones), with `sentAt` (the call's or its batch's) and the client's own
   * timestamp as `originalTimestamp`: what Segment's pipeline holds (pipeline-event.ts). Never in
   * the classic webhook body.
   */
  sent?: Record<string, unknown>;
}

/** Drops undefined fields so the body holds only what the call carried. */
function compact(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

const TYPE_FIELDS: Record<CallType, (m: Message) => Record<string, unknown>> = {
  page: (m) => ({ name: m.name, category: m.category, properties: m.properties ?? {} }),
  screen: (m) => ({ name: m.name, category: m.category, properties: m.properties ?? {} }),
  identify: (m) => ({ traits: m.traits ?? {} }),
  track: (m) => ({ event: m.event, properties: m.properties ?? {} }),
  group: (m) => ({ groupId: m.groupId, traits: m.traits ?? {} }),
  // Seed: the alias body carries `Previous ID` and `User ID`; previousId/userId also stay for
  // receivers written against Segment's real payloads.
  alias: (m) => ({ previousId: m.previousId, 'Previous ID': m.previousId, 'User ID': m.userId }),
};

/** Seed, "Message bodies sent to a webhook URL": version 1, the common fields, then the type's own. */
export function messageBody(m: Message): MessageBody {
  return compact({
    version: 1,
    type: m.type,
    messageId: m.messageId,
    userId: m.userId,
    anonymousId: m.anonymousId,
    timestamp: m.timestamp,
    receivedAt: m.receivedAt,
    context: m.context,
    ...TYPE_FIELDS[m.type](m),
  }) as MessageBody;
}

/** Seed: a delete notification carries only type, userId and timestamp (and no version). */
export function toDeleteMessage(userId: string, timestamp: string): MessageBody {
  return { type: 'delete', userId, timestamp };
}
