import { ActivityFailure, allHandlersFinished, condition, continueAsNew, defineUpdate, log, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PAGE_ACTIVITY, PAGED_JOB_RETRY } from './paged-job';
import { addCounts, NO_COUNTS, type ReplayCounts, type ReplayPlan, type ReplayStatus } from '../delivery/replay';
import { REST_MS, type ReplayPace } from '../delivery/replay-pace';
import { backgroundTaskFinished } from './task-finished';

/**
 * A replay of the archive to one destination, or of what the tracking plan blocked to
 * every enabled destination of the source (a blocked-only replay: the same steps, its
 * page activity decides and starts differently), one workflow per replay:
 *
 *   pages    → one activity per page of the archive (by a cursor over receivedAt) decides each
 *              message as its delivery would be decided today and starts the deliveries, each
 *              under its own workflow id, so a page run again after a crash starts nothing twice;
 *   settle   → while REPLAY_MAX_IN_FLIGHT deliveries are under way (or every page is read) it asks
 *              which have ended, with growing waits, and counts them delivered or failed;
 *   pace     → since REPLAY_PACED_PATCH each page holds what live traffic leaves room for, sent
 *              spaced at that pace (delivery/replay-pace.ts), and what is under way is asked
 *              about every second between pages.
 *
 * Its counts and status live in this workflow and are written to the store after every step (the
 * API reads them there). Pause, resume and cancel are Updates: each returns once the new status is
 * written. Paused, it starts nothing and keeps counting what was under way; cancelled, it stops.
 * It continues as new every RUNS_AT steps (or when Temporal suggests it), carrying its state.
 */

export interface ReplayState {
  cursor?: string;
  pagesDone: boolean;
  counts: ReplayCounts;
  /** messageIds whose replayed delivery is under way. */
  inFlight: string[];
  paused: boolean;
  runs: number;
  /** The pace the last paced page went at (absent before the first, and in runs from before pacing). */
  pace?: ReplayPace;
}

export interface ReplayArchiveInput {
  replay: ReplayPlan;
  resume?: ReplayState;
}

export const pauseReplay = defineUpdate<ReplayStatus>('pauseReplay');
export const resumeReplay = defineUpdate<ReplayStatus>('resumeReplay');
export const cancelReplay = defineUpdate<ReplayStatus>('cancelReplay');

/** Archived messages per page activity (fewer when REPLAY_MAX_IN_FLIGHT leaves less room). */
export const PAGE_SIZE = 50;
/** Pages and checks per run (plan.stepsPerRun may say fewer): about a dozen events each, far below history limits. */
const STEPS_PER_RUN = 200;
const FIRST_WAIT_MS = 500;
/**
 * Since this patch: the next page starts once half a page fits, not a whole one, so the page's slowest
 * delivery (a retry, a hold) no longer stops the replay until it ends. Histories from before it
 * replay as they ran.
 */
export const REFILL_AT_HALF_PATCH = 'replay-refills-at-half-a-page';
const LONGEST_WAIT_MS = 10_000;
/**
 * Since live traffic first: pages are paced by live lag (the page activity waits
 * between starts and rests to measure), and deliveries under way are asked about every
 * CHECK_EVERY_MS between pages rather than only once the replay is full. Runs from before it
 * replay as they ran.
 */
export const REPLAY_PACED_PATCH = 'replay-paced-by-live-lag';
const CHECK_EVERY_MS = 1_000;

/**
 * Each status write runs after the one before whether or not that one failed (out
 * of retries: the store away for minutes), so one failed write no longer fails every later pause,
 * resume and the replay's end. The change whose write failed still answers with the failure, and it
 * is logged. Runs from before it replay as they ran.
 */
export const REPLAY_STATUS_WRITES_PATCH = 'replay-status-writes-independent';

const { replayPage, replayOutcomes } = proxyActivities<Activities>(PAGE_ACTIVITY);
const { saveReplayCounts, setReplayStatus } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: PAGED_JOB_RETRY });

export async function replayArchive({ replay, resume }: ReplayArchiveInput): Promise<ReplayCounts> {
  // Counts carried from a run before blocked-only replays lack skipped.blocked and .duplicate: made whole before
  // `saved` is taken, so the first comparison sees the same change (and saves when) the old code did.
  const state: ReplayState = resume ? { ...resume, counts: addCounts(NO_COUNTS, resume.counts) } : { pagesDone: false, counts: NO_COUNTS, inFlight: [], paused: false, runs: 1 };
  const paced = patched(REPLAY_PACED_PATCH);
  let cancelled = false;
  // Paced: a page (and the save of its counts) under way, the changes waiting for it to end, and
  // the replay's end when an activity out of retries ended it (a change then writes nothing).
  let paging = false;
  let changing = 0;
  let failed = false;
  // Status writes one after another, in the order asked: a pause and a resume never land swapped.
  let statusWrites: Promise<unknown> = Promise.resolve();
  const independentWrites = patched(REPLAY_STATUS_WRITES_PATCH);
  const writeStatus = (status: ReplayStatus): Promise<unknown> => {
    const write = statusWrites.then(() => setReplayStatus({ id: replay.id, status }));
    statusWrites = independentWrites
      ? write.catch((err: unknown) => log.warn('a replay status write failed; later writes still run', { replayId: replay.id, status, error: (err as Error).message }))
      : write;
    return write;
  };
  const change = async (paused: boolean | 'cancel'): Promise<ReplayStatus> => {
    if (cancelled) return 'cancelled';
    if (paced) {
      // A paced page sends for about a second: the answer waits for it (no new page starts
      // meanwhile), so once it says paused or cancelled nothing more starts, and its counts are saved.
      changing++;
      await condition(() => !paging);
      changing--;
      if (cancelled) return 'cancelled';
      if (failed) return 'failed';
    }
    if (paused === 'cancel') cancelled = true;
    else state.paused = paused;
    const status: ReplayStatus = cancelled ? 'cancelled' : state.paused ? 'paused' : 'running';
    await writeStatus(status);
    return status;
  };
  setHandler(pauseReplay, () => change(true));
  setHandler(resumeReplay, () => change(false));
  setHandler(cancelReplay, () => change('cancel'));

  let saved = JSON.stringify(state.counts);
  const saveCounts = async () => {
    const now = JSON.stringify(state.counts);
    if (now === saved) return;
    await saveReplayCounts({ id: replay.id, counts: state.counts });
    saved = now;
  };

  let steps = 0;
  let waitMs = FIRST_WAIT_MS;
  let checkedAt = Date.now();
  try {
    // Paused, it waits for a resume or a cancel even with nothing left: the operator holds it.
    while (!cancelled && (state.paused || !state.pagesDone || state.inFlight.length > 0)) {
      const room = replay.maxInFlight - state.inFlight.length;
      if (state.paused && state.inFlight.length === 0) {
        await condition(() => !state.paused || cancelled);
        continue;
      }
      const pageSize = Math.min(PAGE_SIZE, replay.maxInFlight);
      const checkDue = paced && state.inFlight.length > 0 && Date.now() - checkedAt >= CHECK_EVERY_MS;
      const pageFits = paced ? room > 0 && !checkDue && changing === 0 : room >= pageSize || (room >= Math.ceil(pageSize / 2) && patched(REFILL_AT_HALF_PATCH));
      let rest = false;
      if (!state.paused && !state.pagesDone && pageFits) {
        paging = paced;
        const page = await replayPage({ replay, size: Math.min(PAGE_SIZE, room), ...(state.cursor !== undefined && { cursor: state.cursor }), ...(paced && { paced, ...(state.pace && { pace: state.pace }) }) });
        if (page.pace) state.pace = page.pace;
        rest = page.rested === true;
        if (!rest) {
          state.counts = addCounts(state.counts, page.counts);
          state.inFlight.push(...page.inFlight);
          state.cursor = page.next;
          state.pagesDone = page.next === undefined;
        }
        waitMs = FIRST_WAIT_MS;
      } else {
        // Woken early by a pause or a cancel; a resume needs no wake (there is room or there is not).
        if (!checkDue) await condition(() => cancelled, waitMs);
        if (cancelled) break;
        checkedAt = Date.now();
        // A blocked-only replay's deliveries are the messages' own workflows: absent before it, the same input.
        const ended = await replayOutcomes({ replayId: replay.id, messageIds: state.inFlight, ...(replay.blockedOnly && { recoveredFrom: replay.sourceId }) });
        const done = new Set(ended.map((e) => e.messageId));
        state.inFlight = state.inFlight.filter((messageId) => !done.has(messageId));
        state.counts = addCounts(state.counts, { delivered: ended.filter((e) => e.outcome === 'delivered').length, failed: ended.filter((e) => e.outcome !== 'delivered').length });
        waitMs = ended.length > 0 ? FIRST_WAIT_MS : Math.min(waitMs * 2, LONGEST_WAIT_MS);
      }
      await saveCounts();
      paging = false;
      // Resting (delivery/replay-pace.ts): nothing starts for REST_MS, unless a pause, resume or cancel comes first.
      if (rest) await condition(() => cancelled || state.paused || changing > 0, REST_MS);
      steps++;
      const more = !cancelled && (state.paused || !state.pagesDone || state.inFlight.length > 0);
      if (more && (steps >= (replay.stepsPerRun ?? STEPS_PER_RUN) || workflowInfo().continueAsNewSuggested)) {
        // An Update under way finishes (its status written) before the run hands over.
        await condition(allHandlersFinished);
        await continueAsNew<typeof replayArchive>({ replay, resume: { ...state, runs: state.runs + 1 } });
      }
    }
    await saveCounts();
    await statusWrites;
    await setReplayStatus({ id: replay.id, status: cancelled ? 'cancelled' : 'completed' });
  } catch (err) {
    // An activity out of retries (the store away for minutes, the destination deleted): the replay
    // ends failed with the counts it had.
    if (!(err instanceof ActivityFailure)) throw err;
    // A change waiting for the failed page answers `failed` (it would otherwise wait for ever).
    paging = false;
    failed = true;
    await saveReplayCounts({ id: replay.id, counts: state.counts });
    await setReplayStatus({ id: replay.id, status: 'failed' });
  }
  await condition(allHandlersFinished);
  await backgroundTaskFinished({ sourceId: replay.sourceId, ...(replay.destinationId !== undefined && { destinationId: replay.destinationId }) }, { kind: 'replay', id: replay.id, status: failed ? 'failed' : cancelled ? 'cancelled' : 'completed' });
  return state.counts;
}
