import { log } from '@temporalio/activity';
import { functionDisposition, type FunctionDisposition } from '../functions/disposition';
import { handlerFor } from '../functions/handlers';
import { sensitiveValues } from '../functions/instance-settings';
import { maskSecrets } from '../functions/masked-settings';
import type { SandboxPool, SandboxResult } from '../functions/sandbox-pool';
import type { AttemptResult } from '../delivery/types';
import { FUNCTION_LOGS } from '../privacy/sealed-body';
import type { FunctionRecord } from '../store/functions';
import type { Destination, Store } from '../store/types';
import type { OpenAttemptRequest as AttemptRequest } from './erased-users';

/**
 * One attempt of a destination function: its handler for the event's type, run in the sandbox
 * (off this event loop, under its limits), is the delivery, and its `fetch` calls are the attempt.
 * The version is the one the delivery pinned (else the one deployed now, which the answer pins);
 * the settings are read from the store here, so no setting value is in workflow history; what the
 * answer says (reasons) has every sensitive value masked.
 */

/** Module state is kept per instance and version: a new deploy starts fresh. */
const sessionKey = (destinationId: string, functionId: string, version: number) => `${destinationId}:${functionId}:${version}`;

export type AttemptFunction = (req: AttemptRequest, destination: Destination, options: { local: boolean }) => Promise<AttemptResult>;

/** An instance to run: its function, its settings, and the key its module state is kept under (with the version). */
export interface FunctionInstanceToRun {
  functionId: string;
  settings: Record<string, unknown>;
  /** Module state is kept per instance and version: a new deploy starts fresh. */
  sessionKey: (functionId: string, version: number) => string;
}

/**
 * What one run of an instance came to: the sandbox's result, its disposition, and what the attempt
 * carries of it (its version, duration, and console output and error message sealed as the body is).
 * `failed`: it could not run (no function, no such version); `deferred`: asked as a local activity.
 */
export type InstanceRun =
  | { kind: 'ran'; result: SandboxResult; disposition: FunctionDisposition; base: Pick<AttemptResult, 'durationMs' | 'functionVersion' | 'logs' | 'errorMessage' | 'sealedLogs'> }
  | { kind: 'answer'; answer: Omit<AttemptResult, 'destinationEnabled' | 'webhookCount'> };

/**
 * Runs an instance's handler for the event in the attempt, on the version the delivery pinned (else
 * the one deployed now). The first ask (a local activity) only pins the version and hands the run
 * to a regular activity: a handler may use its whole time limit, which a local activity would hold
 * its workflow task for. Shared by destination functions and insert functions.
 */
export async function runInstance(store: Pick<Store, 'functions'>, sandbox: SandboxPool | undefined, req: AttemptRequest, instance: FunctionInstanceToRun, local: boolean): Promise<InstanceRun> {
  const permanent = (reason: string) => ({ kind: 'permanent' as const, reason });
  const fn: FunctionRecord | undefined = await store.functions.get(instance.functionId);
  if (!fn) return { kind: 'answer', answer: { outcome: permanent(`function:error: function ${instance.functionId} no longer exists`) } };
  const version = req.functionVersion ?? fn.deployedVersion ?? fn.latestVersion;
  if (local) return { kind: 'answer', answer: { deferred: true, functionVersion: version } };
  if (!sandbox) return { kind: 'answer', answer: { functionVersion: version, outcome: { kind: 'retry', reason: 'function:error: this worker runs no functions' } } };
  const code = await store.functions.version(fn.id, version);
  if (!code) return { kind: 'answer', answer: { functionVersion: version, outcome: permanent(`function:error: function ${fn.id} has no version ${version}`) } };
  const event = req.message;
  // A type Segment does not dispatch names the handler it would be, which no code defines: EventNotSupported.
  const handler = handlerFor(event.type) ?? `on${String(event.type)}`;
  const started = Date.now();
  const result = await sandbox.run({ sessionKey: instance.sessionKey(fn.id, version), code: code.code, handler, input: event, settings: instance.settings });
  const durationMs = Date.now() - started;
  const secrets = sensitiveValues(fn.settings, instance.settings);
  const error = result.error && { type: result.error.type, message: maskSecrets(result.error.message, secrets) };
  const disposition = functionDisposition(result.status === 'ok' ? undefined : (error ?? { type: 'Error', message: 'the function failed' }));
  const logs = result.logs.map((line) => maskSecrets(line, secrets));
  // Console output and the error's message are user data like the body they were made from:
  // sealed as the body is (the reason keeps only the disposition and the error's type).
  const output = { ...(logs.length > 0 && { logs }), ...(error && { errorMessage: error.message }) };
  const logged = Object.keys(output).length === 0 ? {} : req.seal ? { sealedLogs: req.seal(output, FUNCTION_LOGS) } : output;
  return { kind: 'ran', result, disposition, base: { durationMs, functionVersion: version, ...logged } };
}

/** A disposition other than delivered as the attempt's answer (`stopped`: skipped or filtered, the destination ends here). */
export function dispositionAnswer(disposition: Exclude<FunctionDisposition, { kind: 'delivered' }>): Pick<AttemptResult, 'outcome' | 'stopped'> {
  if (disposition.kind === 'retry') return { outcome: { kind: 'retry', reason: disposition.reason } };
  if (disposition.kind === 'failed') return { outcome: { kind: 'permanent', reason: disposition.reason } };
  return { stopped: disposition.reason, outcome: { kind: 'permanent', reason: disposition.reason } };
}

/** `onStopped`: a skipped or filtered message, with its reason word (`function:unsupported`, `function:dropped`), for `/metrics`. */
export function makeAttemptFunction(store: Pick<Store, 'functions'>, sandbox: SandboxPool | undefined, onStopped?: (destinationId: string, reason: string) => void): AttemptFunction {
  return async (req, destination, { local }) => {
    const fields = { destinationId: req.destinationId, round: req.round, messageId: req.messageId };
    const instance = destination.function;
    if (!instance) return { destinationEnabled: true, webhookCount: 1, outcome: { kind: 'permanent', reason: 'function:error: the destination names no function' } };
    const run = await runInstance(store, sandbox, req, { ...instance, sessionKey: (functionId, version) => sessionKey(destination.id, functionId, version) }, local);
    if (run.kind === 'answer') return { destinationEnabled: true, webhookCount: 1, ...run.answer };
    const { result, disposition } = run;
    const base = { destinationEnabled: true, webhookCount: 1, ...run.base };
    const version = run.base.functionVersion;
    if (disposition.kind === 'delivered') {
      log.debug('function delivered', { ...fields, version, durationMs: base.durationMs });
      // The answer of its last request that had one (200 when it made none): what the attempt shows.
      const status = [...result.requests].reverse().find((r) => r.status !== null)?.status ?? 200;
      return { ...base, outcome: { kind: 'success', status } };
    }
    log.warn(`function attempt: ${disposition.reason}`, { ...fields, version, durationMs: base.durationMs });
    // Skipped or filtered: the destination stops; the attempt still shows (with its logs) as one that ends here.
    if (disposition.kind === 'stopped') onStopped?.(req.destinationId, disposition.word);
    return { ...base, ...dispositionAnswer(disposition) };
  };
}
