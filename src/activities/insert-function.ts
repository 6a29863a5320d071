import { log } from '@temporalio/activity';
import type { SandboxPool } from '../functions/sandbox-pool';
import type { AttemptResult, MessageBody } from '../delivery/types';
import type { Destination, InsertFunctionInstance, Store } from '../store/types';
import { dispositionAnswer, runInstance } from './attempt-function';
import type { OpenAttemptRequest as AttemptRequest } from './erased-users';

/**
 * A destination's insert function, run in its attempt on the event as the pipeline holds it (after
 * the tracking plan, the destination's filters, `integrations`, consent and its mappings' triggers,
 * which chose this delivery): the event it returns is what the mapping renders or what is signed and
 * sent. It runs the version the delivery pinned, with its instance's settings read from the store
 * here (never in workflow history); its dispositions are a destination function's, and its console
 * output rides with the attempt, sealed as the body is.
 */

/** What the attempt goes on with: the event to render and send (and what the attempt carries of the run), or its answer now. */
export type InsertFunctionRun = { event: MessageBody; carried: Partial<AttemptResult> } | { answer: Omit<AttemptResult, 'destinationEnabled' | 'webhookCount'> };

export type InsertFunction = (req: AttemptRequest, destination: Destination, instance: InsertFunctionInstance, options: { local: boolean }) => Promise<InsertFunctionRun>;

/** A handler's answer that is an event: a plain object (an array, a string or nothing is not one). */
const isEvent = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The type named in the reason when a handler returns no event: Segment has no word for it; DropEvent is how a function drops one. */
export const NO_EVENT = 'NoEventReturned';

/** `onStopped`: a skipped or filtered message, with its reason word, for `/metrics` (as a destination function's). */
export function makeInsertFunction(store: Pick<Store, 'functions'>, sandbox: SandboxPool | undefined, onStopped?: (destinationId: string, reason: string) => void): InsertFunction {
  return async (req, destination, instance, { local }) => {
    // Module state is kept per instance and version, apart from any destination function's.
    const run = await runInstance(store, sandbox, req, { functionId: instance.functionId, settings: instance.settings, sessionKey: (functionId, version) => `insert:${instance.id}:${functionId}:${version}` }, local);
    if (run.kind === 'answer') return { answer: run.answer };
    const fields = { destinationId: destination.id, ...(req.mapping !== undefined && { mapping: req.mapping }), round: req.round, messageId: req.messageId, version: run.base.functionVersion, durationMs: run.base.durationMs };
    const { disposition } = run;
    if (disposition.kind === 'delivered') {
      if (isEvent(run.result.result)) return { event: run.result.result as MessageBody, carried: run.base };
      log.warn('insert function returned no event', fields);
      return { answer: { ...run.base, outcome: { kind: 'permanent', reason: `function:error: ${NO_EVENT}` } } };
    }
    log.warn(`insert function: ${disposition.reason}`, fields);
    if (disposition.kind === 'stopped') onStopped?.(destination.id, disposition.word);
    return { answer: { ...run.base, ...dispositionAnswer(disposition) } };
  };
}
