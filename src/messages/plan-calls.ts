import { messageBody, type Message } from '../delivery/payload';
import type { MessageBody } from '../delivery/types';
import type { ArchivedCall } from '../delivery/replay';
import { decidePlan, type CompiledPlan, type PlanVerdict } from '../plans/plan-decision';
import type { SourcePlan, SourcePlanReader } from '../plans/plan-reader';
import type { SchemaControls } from '../plans/schema-controls';
import { isConsentChange } from '../rules/consent';
import type { AcceptedCall } from './accept-calls';

/** One accepted call after the plan: the message as it goes on (omissions made), and the verdict. */
export interface PlannedCall extends AcceptedCall {
  /** The call as accepted, before any omission: what the archive keeps and a blocked-only replay validates again. */
  original: Message;
  verdict: CallVerdict;
}

/** The plan's verdict on a call, with the one exemption from its block (call-fate.ts reads both). */
export type CallVerdict = PlanVerdict & { exemptFromBlock?: 'consent-change' };

/**
 * The plan's verdict on one call, at ingest and on replay alike. A consent change (Segment Consent
 * Preference Updated) is never blocked: a plan that does not list it, or a COMMON rule it breaks,
 * would otherwise keep a withdrawal from every destination and from the profile Personas reads, as
 * Segment avoids by adding the event to every plan. It goes on as sent; its violations are reported.
 */
export function decideCallPlan(body: MessageBody, plan: CompiledPlan | undefined, controls: SchemaControls): CallVerdict {
  const verdict = decidePlan(body, plan, controls);
  if (verdict.status !== 'blocked' || !isConsentChange(body)) return verdict;
  const { decidedBy: _blockedBy, ...rest } = verdict;
  return { ...rest, status: 'passed', exemptFromBlock: 'consent-change' };
}

/** The message with the body the plan left: properties, traits and context are the fields omission changes. */
function withBody(message: Message, verdict: PlanVerdict): Message {
  if (verdict.status !== 'omitted') return message;
  const { properties, traits, context } = verdict.body as unknown as { properties?: Record<string, unknown>; traits?: Record<string, unknown>; context: Record<string, unknown> };
  return { ...message, ...(message.properties !== undefined && { properties }), ...(message.traits !== undefined && { traits }), context };
}

/**
 * The ingest step that runs the source's plan over every accepted call, once per
 * message, before the archive, the profiles and the per-destination decision. Undefined when the
 * source has no plan: nothing is decided, nothing changes.
 */
export async function planCalls(readPlan: SourcePlanReader, sourceId: string, accepted: readonly AcceptedCall[]): Promise<{ source: SourcePlan; calls: PlannedCall[] } | undefined> {
  const source = await readPlan(sourceId);
  if (!source.plan) return undefined;
  const calls = accepted.map((call): PlannedCall => {
    const verdict = decideCallPlan(messageBody(call.message), source.plan, source.controls);
    return { ...call, message: withBody(call.message, verdict), original: call.message, verdict };
  });
  return { source, calls };
}

/** What the archive keeps of a verdict, sealed with the call: status, the deciding stage, the violations (names and rules, no values), the names omitted. */
export const archivedVerdict = (verdict: PlanVerdict): NonNullable<ArchivedCall['plan']> => ({
  status: verdict.status,
  ...(verdict.decidedBy && { decidedBy: verdict.decidedBy }),
  violations: verdict.violations.map(({ violationType, field, description }) => ({ violationType, field, description })),
  ...(verdict.omitted.length > 0 && { omitted: [...verdict.omitted] }),
});
