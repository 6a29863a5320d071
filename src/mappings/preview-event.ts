import { pipelineEvent } from '../delivery/pipeline-event';
import { isIsoDateTime } from '../delivery/timestamps';
import { MESSAGE_TYPES, type CallType } from '../delivery/types';
import { acceptCall } from '../messages/accept-calls';
import { callProblem } from '../messages/call-rules';

/**
 * The event a mapping preview renders: the one delivery would render, made from the previewed call
 * the way ingestion makes it (messageId filled, timestamp corrected, the pipeline's fields), so the
 * preview shows exactly the body that would be sent. An event that carries `receivedAt` (one copied
 * from a debugger) arrives then; otherwise now. An event ingestion would refuse is rendered as given
 * (it could never be sent; the preview still shows what the mapping makes of it).
 */
export function previewedEvent(event: Record<string, unknown>, nowMs: number): Record<string, unknown> {
  const type = event.type;
  if (typeof type !== 'string' || !(MESSAGE_TYPES as readonly string[]).includes(type)) return event;
  const { type: _type, ...fields } = event;
  const call = { type: type as CallType, fields };
  if (callProblem(call)) return event;
  const arrived = typeof event.receivedAt === 'string' && isIsoDateTime(event.receivedAt) ? Date.parse(event.receivedAt) : nowMs;
  return pipelineEvent(acceptCall(call, arrived));
}
