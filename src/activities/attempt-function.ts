import { log } from '@temporalio/activity';
import { functionDisposition } from '../functions/disposition';
import { handlerFor } from '../functions/handlers';
import { sensitiveValues } from '../functions/instance-settings';
import { maskSecrets } from '../functions/masked-settings';
import type { SandboxPool } from '../functions/sandbox-pool';
import type { AttemptResult } from '../delivery/types';
import { FUNCTION_LOGS } from '../privacy/sealed-body';
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

/** `onStopped`: a skipped or filtered message, with its reason word (`function:unsupported`, `function:dropped`), for `/metrics`. */
export function makeAttemptFunction(store: Pick<Store, 'functions'>, sandbox: SandboxPool | undefined, onStopped?: (destinationId: string, reason: string) => void): AttemptFunction {
  return async (req, destination, { local }) => {
    const fields = { destinationId: req.destinationId, round: req.round, messageId: req.messageId };
    const instance = destination.function;
    const failed = (reason: string): AttemptResult => ({ destinationEnabled: true, webhookCount: 1, outcome: { kind: 'permanent', reason } });
    if (!instance) return failed('function:error: the destination names no function');
    const fn = await store.functions.get(instance.functionId);
    if (!fn) return failed(`function:error: function ${instance.functionId} no longer exists`);
    const version = req.functionVersion ?? fn.deployedVersion ?? fn.latestVersion;
    // The first ask pins the version and hands the run to a regular activity: a handler may use its
    // whole time limit, which a local activity would hold its workflow task for.
    if (local) return { destinationEnabled: true, webhookCount: 1, deferred: true, functionVersion: version };
    if (!sandbox) return { destinationEnabled: true, webhookCount: 1, functionVersion: version, outcome: { kind: 'retry', reason: 'function:error: this worker runs no functions' } };
    const code = await store.functions.version(fn.id, version);
    if (!code) return { ...failed(`function:error: function ${fn.id} has no version ${version}`), functionVersion: version };
    const event = req.message;
    // A type Segment does not dispatch names the handler it would be, which no code defines: EventNotSupported.
    const handler = handlerFor(event.type) ?? `on${String(event.type)}`;
    const started = Date.now();
    const result = await sandbox.run({ sessionKey: sessionKey(destination.id, fn.id, version), code: code.code, handler, input: event, settings: instance.settings });
    const durationMs = Date.now() - started;
    const secrets = sensitiveValues(fn.settings, instance.settings);
    const error = result.error && { type: result.error.type, message: maskSecrets(result.error.message, secrets) };
    const disposition = functionDisposition(result.status === 'ok' ? undefined : (error ?? { type: 'Error', message: 'the function failed' }));
    const logs = result.logs.map((line) => maskSecrets(line, secrets));
    // Console output and the error's message are user data like the body they were made from:
    // sealed as the body is (the reason keeps only the disposition and the error's type).
    const output = { ...(logs.length > 0 && { logs }), ...(error && { errorMessage: error.message }) };
    const logged = Object.keys(output).length === 0 ? {} : req.seal ? { sealedLogs: req.seal(output, FUNCTION_LOGS) } : output;
    const base = { destinationEnabled: true, webhookCount: 1, durationMs, functionVersion: version, ...logged };
    if (disposition.kind === 'delivered') {
      log.debug('function delivered', { ...fields, version, durationMs });
      // The answer of its last request that had one (200 when it made none): what the attempt shows.
      const status = [...result.requests].reverse().find((r) => r.status !== null)?.status ?? 200;
      return { ...base, outcome: { kind: 'success', status } };
    }
    log.warn(`function attempt: ${disposition.reason}`, { ...fields, version, durationMs });
    if (disposition.kind === 'retry') return { ...base, outcome: { kind: 'retry', reason: disposition.reason } };
    if (disposition.kind === 'failed') return { ...base, outcome: { kind: 'permanent', reason: disposition.reason } };
    // Skipped or filtered: the destination stops; the attempt still shows (with its logs) as one that ends here.
    onStopped?.(req.destinationId, disposition.word);
    return { ...base, stopped: disposition.reason, outcome: { kind: 'permanent', reason: disposition.reason } };
  };
}
