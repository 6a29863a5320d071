import type { StopReason } from '../delivery/stop-reasons';
import { MESSAGE_TYPES, type CallType } from '../delivery/types';
import type { Call } from './call';
import { callProblem } from './call-rules';

/** The event a destination's test sends when none is given: a `track` any receiver can tell apart. */
export const SAMPLE_TEST_EVENT = {
  type: 'track',
  event: 'Switchyard Test Event',
  userId: 'switchyard-test-user',
  properties: { test: true, note: 'Sent from Switchyard to check this destination: its rules, mapping and signature.' },
} as const;

/**
 * A test's event as a call, or the rule it breaks with its field under `event.` (the request's
 * own name for it). The call's own `messageId` is replaced by the caller: every test is a delivery
 * of its own, never one found by id from an earlier test.
 */
export function testCall(event: Record<string, unknown> = SAMPLE_TEST_EVENT): Call | { problem: string } {
  const { type, messageId: _ignored, ...fields } = event;
  if (typeof type !== 'string' || !(MESSAGE_TYPES as readonly string[]).includes(type)) return { problem: `event.type: must be one of ${MESSAGE_TYPES.join(', ')}` };
  const call: Call = { type: type as CallType, fields };
  const problem = callProblem(call, 'event.');
  // The size rule names the whole call by its prefix alone ("event.: is … bytes"): it is `event` itself.
  return problem ? { problem: problem.replace(/^event\.: /, 'event: ') } : call;
}

/**
 * Why a test event reached no attempt, in the words an operator reads beside the button: the
 * first rule that stopped it and, for a filter or transformation, its name (`name` absent: its id
 * is gone, e.g. deleted meanwhile).
 */
export function stoppedBy(stop: StopReason, name?: string): string {
  const quoted = name === undefined ? '' : ` "${name}"`;
  switch (stop) {
    case 'filters':
      return `filtered by filter${quoted}`;
    case 'sampled':
      return `sampled out by filter${quoted}`;
    case 'transformation':
      return `dropped by transformation${quoted}`;
    case 'consent':
      return 'filtered by consent: the event lacks a consent category the destination requires';
    case 'integrations':
      return "filtered by integrations: the event's integrations object turns this destination off";
    case 'suppressed':
      return "filtered by suppression: the event's user is suppressed";
    case 'trigger':
      return "filtered by trigger: no enabled mapping's trigger matches the event";
    case 'plan':
      return "blocked by the source's tracking plan";
  }
}
