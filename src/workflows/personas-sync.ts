import { continueAsNew, log, proxyActivities, workflowInfo, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PageResult } from '../activities/personas';
import type { ComputationRef } from '../personas/types';

/**
 * One Personas sync (seed, Personas rules 3-4), shared by syncAudience and syncComputedTrait:
 *
 *   prepare  → the store freezes the changes of snapshot version N (or hands back the pending N a
 *              crashed run left, unchanged)
 *   pages    → one activity per page of changes starts one identify delivery workflow per change,
 *              with a message id derived from (computation, N, profile)
 *   commit   → only now do the changes become the snapshot the next sync compares with
 *
 * A crash anywhere before commit reruns the same version with the same ids, so Temporal refuses
 * the deliveries already started: at least once, and no duplicates. The history holds about six
 * events per page of up to PERSONAS_SYNC_PAGE_SIZE changes, and the workflow continues as new every
 * PAGES_PER_RUN pages, so an audience of any size stays far below history limits.
 */

export interface SyncProgress {
  version: number;
  /** Where the next page begins: an opaque cursor (personas/sync-cursor.ts), no profile id. */
  after?: string;
  changes: number;
  started: number;
  existing: number;
  pages: number;
  runs: number;
}

export interface PersonasSyncInput {
  computation: ComputationRef;
  /** Set when the sync continued as new part-way through its pages. */
  resume?: SyncProgress;
}

export type SyncStatus = 'committed' | 'already_committed' | 'superseded' | 'gone' | 'no_destinations';

export interface PersonasSyncReport {
  computation: ComputationRef;
  status: SyncStatus;
  version?: number;
  /** Changed profiles in this version. */
  changes: number;
  /** Delivery workflows this sync started; `existing` were already there (a rerun). */
  started: number;
  existing: number;
  pages: number;
  runs: number;
}

/** Pages per workflow run before continuing as new: about 600 history events per run (six per page). */
export const PAGES_PER_RUN = 100;

const retry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 };

const { preparePersonasSync, commitPersonasSync, retirePersonasSchedule } = proxyActivities<Activities>({
  // The audience query runs synchronously in SQLite and cannot heartbeat; a large source takes seconds.
  startToCloseTimeout: '10m',
  retry,
});

const { startPersonasDeliveries } = proxyActivities<Activities>({
  startToCloseTimeout: '10m',
  // A page heartbeats after every start: a worker that dies mid-page is noticed in seconds, not minutes.
  heartbeatTimeout: '10s',
  retry,
});

/**
 * Started by the audience's Temporal Schedule (or `POST /admin/audiences/:id/sync`): sends an
 * identify call with `{<snake_case name>: true}` to each user who joined since the last sync and
 * `false` to each who left; on the first sync, `true` to every member.
 */
export async function syncAudience(input: PersonasSyncInput): Promise<PersonasSyncReport> {
  return runPersonasSync(input);
}

/**
 * Started by the computed trait's Temporal Schedule (or `POST /admin/computed-traits/:id/sync`):
 * sends an identify call with `{<snake_case name>: value}` to each user whose value changed since
 * the last sync.
 */
export async function syncComputedTrait(input: PersonasSyncInput): Promise<PersonasSyncReport> {
  return runPersonasSync(input);
}

export async function runPersonasSync(input: PersonasSyncInput): Promise<PersonasSyncReport> {
  const { computation } = input;
  const report = (status: SyncStatus, progress?: SyncProgress): PersonasSyncReport => ({
    computation,
    status,
    version: progress?.version,
    changes: progress?.changes ?? 0,
    started: progress?.started ?? 0,
    existing: progress?.existing ?? 0,
    pages: progress?.pages ?? 0,
    runs: progress?.runs ?? 1,
  });

  let progress = input.resume;
  if (!progress) {
    const prepared = await preparePersonasSync(computation);
    if (prepared.status === 'gone') {
      await retirePersonasSchedule(computation);
      return report('gone');
    }
    if (prepared.status !== 'ready') return report(prepared.status);
    progress = { version: prepared.version, changes: prepared.changes, started: 0, existing: 0, pages: 0, runs: 1 };
  }

  for (let pagesThisRun = 0; progress.changes > 0; ) {
    const page: PageResult = await startPersonasDeliveries({ computation, version: progress.version, after: progress.after });
    if (page.status !== 'started') {
      log.info('personas sync stopped', { computationId: computation.id, version: progress.version, status: page.status });
      return report(page.status, progress);
    }
    progress = { ...progress, after: page.next, started: progress.started + page.started, existing: progress.existing + page.existing, pages: progress.pages + 1 };
    if (page.next === undefined) break;
    pagesThisRun += 1;
    if (pagesThisRun >= PAGES_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<(input: PersonasSyncInput) => Promise<PersonasSyncReport>>({ computation, resume: { ...progress, runs: progress.runs + 1 } });
    }
  }

  const committed = await commitPersonasSync({ computation, version: progress.version });
  return report(committed, progress);
}
