import { log } from '@temporalio/activity';
import { FUNCTION_REASONS } from '../functions/disposition';
import { sensitiveValues } from '../functions/instance-settings';
import { maskSecrets } from '../functions/masked-settings';
import type { SandboxPool } from '../functions/sandbox-pool';
import { sourceDisposition } from '../functions/source-retry';
import { emittedCalls } from '../functions/source-webhook';
import { ingestCalls, type IngestDependencies } from '../messages/ingest-calls';
import { openForRequest, sealForRequest, type RawFunctionRequest, type SourceFunctionRequest } from '../messages/source-function-request';
import type { Store } from '../store/types';

/**
 * One run of a source function's request, on a worker: the deployed version's `onRequest` (the one
 * the first run used, on a retry) in the sandbox with the source's settings, read here so no setting
 * is in workflow history; then each call it emitted ingested through the one ingest path (plan,
 * rules, deliveries) as the source's own. A RetryError or a timeout asks for a retry; any other
 * error, or the last retry, fails the request, recorded with its error (sealed like the request).
 * What the workflow is answered names only the disposition and the error's class, never its text.
 */

export interface RunOptions {
  attempt: number;
  /** The last try: a RetryError now fails the request. */
  final: boolean;
  version?: number;
}

export interface RunResult {
  kind: 'ingested' | 'retry' | 'failed' | 'gone';
  reason: string;
  version?: number;
}

const sessionKey = (sourceId: string, functionId: string, version: number) => `source:${sourceId}:${functionId}:${version}`;

export function makeSourceFunctionActivities(
  store: Pick<Store, 'sources' | 'functions' | 'functionRequests' | 'dataKeys'>,
  sandbox: SandboxPool | undefined,
  ingest: (() => IngestDependencies) | undefined,
  sealing: boolean,
) {
  return {
    async runSourceFunction(request: SourceFunctionRequest, options: RunOptions): Promise<RunResult> {
      const fields = { sourceId: request.sourceId, requestId: request.requestId, attempt: options.attempt };
      const source = await store.sources.get(request.sourceId);
      const instance = source?.function;
      if (!instance) {
        log.warn('a source function request for a source that no longer runs a function; nothing ingested', fields);
        return { kind: 'gone', reason: 'function:error: the source runs no function now' };
      }
      const fn = await store.functions.get(instance.functionId);
      if (!fn) return { kind: 'gone', reason: `function:error: function ${instance.functionId} no longer exists` };
      const version = options.version ?? fn.deployedVersion ?? fn.latestVersion;
      const raw = await openForRequest<RawFunctionRequest>(store.dataKeys, request.requestId, request.request);
      if (!raw) return { kind: 'gone', reason: 'function:error: the request was erased' };
      const fail = async (reason: string, error: { type: string; message: string }, logs: string[]): Promise<RunResult> => {
        const detail = await sealForRequest(sealing ? store.dataKeys : undefined, request.requestId, { request: raw, error, logs });
        await store.functionRequests.recordFailure({
          id: request.requestId,
          sourceId: request.sourceId,
          functionId: fn.id,
          version,
          receivedAt: new Date(request.receivedAtMs).toISOString(),
          failedAt: new Date().toISOString(),
          reason,
          detail: JSON.stringify(detail),
        });
        log.info('source function request failed', { ...fields, reason });
        return { kind: 'failed', reason, version };
      };
      // Once what it emitted is ingested (each call now sealed under its own user's key), the raw
      // request is needed no more: its key is destroyed, so its copy in history can never be read.
      const shred = async (result: RunResult): Promise<RunResult> => {
        if ('sealed' in request.request) await store.dataKeys.destroy([request.request.sealed.subject]);
        return result;
      };
      if (instance.unreadable) return fail(`${FUNCTION_REASONS.error}: settings unreadable`, { type: 'Error', message: instance.unreadable }, []);
      const code = await store.functions.version(fn.id, version);
      if (!code) return fail(`${FUNCTION_REASONS.error}: Error`, { type: 'Error', message: `function ${fn.id} has no version ${version}` }, []);
      if (!sandbox) throw new Error('this worker runs no functions');
      const result = await sandbox.run({ sessionKey: sessionKey(request.sourceId, fn.id, version), code: code.code, handler: 'onRequest', input: raw, settings: instance.settings });
      const secrets = sensitiveValues(fn.settings, instance.settings);
      const logs = result.logs.map((line) => maskSecrets(line, secrets));
      if (result.status !== 'ok') {
        const error = { type: result.error?.type ?? 'Error', message: maskSecrets(result.error?.message ?? 'the function failed', secrets) };
        const disposition = sourceDisposition(error.type, options.final);
        if (disposition.kind === 'retry') return { kind: 'retry', reason: disposition.reason, version };
        return fail(disposition.reason, error, logs);
      }
      // Only a run that returned without error sends what it emitted, as Segment's runtime does.
      const { calls, objects } = emittedCalls(request.requestId, result.emitted ?? []);
      if (objects > 0) log.info('Segment.set objects are for warehouses; none kept', { ...fields, objects });
      if (calls.length === 0) return shred({ kind: 'ingested', reason: 'ingested: 0 calls', version });
      if (!ingest) throw new Error('this worker ingests no calls');
      const ingested = await ingestCalls(ingest(), { sourceId: request.sourceId, calls, receivedAtMs: request.receivedAtMs, inBatch: true });
      // Temporal or the store away: the activity is tried again, the same calls with the same messageIds.
      if (ingested.status === 'unavailable') throw new Error(`the source could not take the emitted calls: ${ingested.reason}`);
      if (ingested.status === 'rejected') return fail(`${FUNCTION_REASONS.rejected}: emitted calls refused`, { type: 'ValidationError', message: ingested.problem }, logs);
      return shred({ kind: 'ingested', reason: `ingested: ${calls.length} calls`, version });
    },
  };
}
