import type { Message } from './payload';
import type { MessageBody } from './types';

/**
 * The event as Segment's pipeline holds it, which is what a `{"@path": "$."}` mapping of an Actions
 * destination renders on Segment: every root field the sender sent (`channel`, `sentAt`,
 * `integrations`, `_metadata`, and unknown ones), with `messageId` filled, `receivedAt` stamped,
 * `timestamp` corrected for clock skew (receivedAt − (sentAt − originalTimestamp)), the client's own
 * timestamp kept as `originalTimestamp`, and `context.ip` filled. No `version` is added: that is
 * the classic webhook body's (payload.ts messageBody), which keeps the seed's shape.
 *
 * Two fields are left out: `writeKey` (a credential some clients put in the body; it never leaves
 * Switchyard) and `type`-specific fields the plan omitted (the message carries what the plan left).
 */
export function pipelineEvent(message: Message): MessageBody {
  const sent = message.sent ?? {};
  const { writeKey: _credential, ...given } = sent;
  const event: Record<string, unknown> = { ...given };
  const set = (name: string, value: unknown) => {
    if (value === undefined) delete event[name];
    else event[name] = value;
  };
  set('type', message.type);
  set('messageId', message.messageId);
  set('userId', message.userId);
  set('anonymousId', message.anonymousId);
  set('context', message.context);
  // What the plan left of them (an omitted property is gone from the pipeline too).
  if (message.properties !== undefined || 'properties' in given) set('properties', message.properties);
  if (message.traits !== undefined || 'traits' in given) set('traits', message.traits);
  for (const name of ['event', 'name', 'category', 'groupId', 'previousId'] as const) if (message[name] !== undefined) set(name, message[name]);
  set('timestamp', message.timestamp);
  set('receivedAt', message.receivedAt);
  return event as MessageBody;
}
