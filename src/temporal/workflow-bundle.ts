import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type Logger, type WorkflowBundleOption } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from './data-converter';

/**
 * Where `npm run build` writes the workflow bundle: beside the compiled entry points
 * (`dist/workflow-bundle.js`). Run from `src/` (tsx, Jest) there is none, and the worker bundles
 * at start as before.
 */
export const PREBUILT_WORKFLOW_BUNDLE = path.join(__dirname, '..', 'workflow-bundle.js');

/**
 * The workflow code (src/workflows, or dist/workflows when compiled) bundled for Temporal's sandbox,
 * with the failure converter that encodes failure messages (a bundle carries its own).
 */
export function bundleWorkflows(logger?: Logger) {
  return bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), failureConverterPath: FAILURE_CONVERTER_PATH, preloadModules: SHARED_WORKFLOW_MODULES, logger });
}

/**
 * The reusable V8 context evaluates every module of the bundle again for each workflow run (each
 * run has its own module cache), and each delivery paid for all of them. These are evaluated once
 * and shared by every run instead: pure decisions with no state of their own, whose imports are
 * types only (never the workflow SDK, whose modules hold a run's state). Sharing them changes no
 * command a workflow writes, so histories replay as before.
 */
export const SHARED_WORKFLOW_MODULES = [
  '../delivery/backoff',
  '../delivery/destination-outcomes',
  '../delivery/flow-control',
  '../delivery/limits',
  '../delivery/mapping-lanes',
  '../delivery/operational-events',
  '../delivery/replay',
  '../delivery/replay-pace',
  '../delivery/retry-window',
  '../delivery/slow-lane',
  '../delivery/summary',
  '../functions/source-retry',
  '../workflows/signals',
].map((module) => require.resolve(module));

/**
 * WORKFLOW_BUNDLE's file when set, else the prebuilt bundle when there is one (a compiled image: no
 * webpack run at start, which took seconds of CPU per worker process), else one bundled now.
 */
export async function loadWorkflowBundle(logger?: Logger, configured = ''): Promise<WorkflowBundleOption> {
  if (configured !== '') {
    if (!existsSync(configured)) throw new Error(`WORKFLOW_BUNDLE: no file at ${configured}`);
    return { codePath: configured };
  }
  if (existsSync(PREBUILT_WORKFLOW_BUNDLE)) return { codePath: PREBUILT_WORKFLOW_BUNDLE };
  return bundleWorkflows(logger);
}

/** `npm run build`'s last step: bundle the compiled workflows into PREBUILT_WORKFLOW_BUNDLE. */
export async function writeWorkflowBundle(): Promise<string> {
  const { code } = await bundleWorkflows();
  writeFileSync(PREBUILT_WORKFLOW_BUNDLE, code);
  return PREBUILT_WORKFLOW_BUNDLE;
}
