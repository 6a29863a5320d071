import { guarded, holds, needsText } from './access';
import { api, type Destination } from './api';
import { announce, badge, field, h, replace, time } from './dom';
import type { Page } from './page';
import type { ReplayView } from '../../delivery/replay';

/**
 * A replay as the API shows it, with whether it is a dry run and, for a range reaching
 * back past the archive's retention, the oldest moment still archived (absent from an API before it).
 */
type Replay = ReplayView & { dryRun?: boolean; archiveFrom?: string };

/** How often an open replay's progress is read again. */
const POLL_MS = 1_000;

const isOpen = (replay: Replay) => replay.status === 'running' || replay.status === 'paused';
const skippedTotal = (replay: Replay) => replay.skipped.erased + replay.skipped.suppressed + replay.skipped.filtered;

/** A `datetime-local` value (the browser's local time, to the minute) for an ISO time, and back. */
const localValue = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};
const isoOf = (value: string) => new Date(value).toISOString();

function skippedText(replay: Replay): string {
  const { erased, suppressed, filtered } = replay.skipped;
  return `skipped ${skippedTotal(replay)} (erased ${erased}, suppressed ${suppressed}, filtered ${filtered})`;
}

/**
 * A destination's replays of the archive: pick a range and a trigger, run a dry run
 * first (what would be sent), then the replay; watch its progress; pause, resume or cancel it.
 * The Replay button stays off until a dry run of exactly this range and trigger has completed.
 */
export async function replaysPanel(destination: Destination, into: HTMLElement, page: Page): Promise<void> {
  const sinceInput = h('input', { type: 'datetime-local', name: 'since', required: true, value: localValue(Date.now() - 86_400_000) });
  const untilInput = h('input', { type: 'datetime-local', name: 'until', required: true, value: localValue(Date.now() + 60_000) });
  // A trigger's count answers questions about archived bodies: the API asks payloads:read for one.
  const mayTrigger = holds('payloads:read');
  const triggerInput = h('input', { name: 'trigger', size: 40, placeholder: "event = 'Order Completed'", spellcheck: 'false', disabled: !mayTrigger, title: mayTrigger ? undefined : needsText('payloads:read') });
  const dryRunButton = h('button', { type: 'submit', class: 'secondary' }, 'Dry run');
  const replayButton = h('button', { type: 'button', disabled: true }, 'Replay');
  const formError = h('p', { class: 'error', role: 'alert' });
  const dryRunOut = h('p', { class: 'dry-run-result', 'aria-live': 'polite' });
  const list = h('div', { class: 'replay-list' });

  const request = () => {
    const trigger = triggerInput.value.trim();
    return { sourceId: destination.sourceId, destinationId: destination.id, since: isoOf(sinceInput.value), until: isoOf(untilInput.value), ...(trigger && { trigger }) };
  };
  /** The request a completed dry run answered for; the Replay button sends only that one. */
  let checked: string | undefined;
  const invalidate = () => {
    checked = undefined;
    replayButton.disabled = true;
  };
  for (const input of [sinceInput, untilInput, triggerInput]) input.addEventListener('input', invalidate);

  const start = async (dryRun: boolean): Promise<string | undefined> => {
    formError.textContent = '';
    try {
      const { id } = await api<{ id: string }>('POST', '/admin/replays', { ...request(), dryRun });
      return id;
    } catch (err) {
      formError.textContent = err instanceof Error ? err.message : String(err);
      return undefined;
    }
  };

  const form = h(
    'form',
    {
      'aria-label': 'Replay',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        invalidate();
        const asked = JSON.stringify(request());
        const id = await start(true);
        if (!id) return;
        replace(dryRunOut, 'Dry run under way…');
        await refresh();
        // The dry run's own result, read until it ends.
        for (;;) {
          if (page.left()) return;
          const replay = await api<Replay>('GET', `/admin/replays/${encodeURIComponent(id)}`);
          if (!isOpen(replay)) {
            if (replay.status !== 'completed') return void replace(dryRunOut, `Dry run ${replay.status}.`);
            replace(
              dryRunOut,
              `Dry run: ${replay.matched - skippedTotal(replay)} would be sent — matched ${replay.matched}, ${skippedText(replay)}.`,
              replay.archiveFrom && h('span', { class: 'archive-from' }, ` The archive keeps messages from ${new Date(replay.archiveFrom).toLocaleString()} on: older ones in the range are gone.`),
            );
            if (JSON.stringify(request()) === asked) {
              checked = asked;
              replayButton.disabled = false;
            }
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
      },
    },
    field('Received since', sinceInput),
    field('Received until', untilInput),
    field('Trigger (FQL, optional)', triggerInput),
    guarded('POST /admin/replays', dryRunButton),
    guarded('POST /admin/replays', replayButton),
  );
  replayButton.addEventListener('click', () => {
    void (async () => {
      if (checked === undefined || JSON.stringify(request()) !== checked) return;
      const id = await start(false);
      if (!id) return;
      invalidate();
      announce('Replay started');
      await refresh();
    })();
  });

  const change = async (replay: Replay, action: 'pause' | 'resume' | 'cancel', done: string) => {
    await api('POST', `/admin/replays/${encodeURIComponent(replay.id)}/${action}`);
    announce(done);
    await refresh();
  };

  const row = (replay: Replay) =>
    h(
      'tr',
      { 'data-replay-id': replay.id },
      h('td', {}, time(replay.createdAt), h('div', { class: 'muted' }, h('code', {}, replay.id))),
      h('td', {}, time(replay.since), ' – ', time(replay.until), replay.trigger && h('div', {}, h('code', {}, replay.trigger))),
      h('td', { class: 'replay-status' }, badge(replay.status), replay.dryRun && ' ', replay.dryRun && h('span', { class: 'dry-run' }, badge('dry run', 'off'))),
      h(
        'td',
        { class: 'replay-progress' },
        `matched ${replay.matched}, started ${replay.started}, delivered ${replay.delivered}, failed ${replay.failed}; ${skippedText(replay)}`,
        replay.started > 0 && h('div', {}, h('progress', { max: replay.started, value: replay.delivered + replay.failed })),
      ),
      h(
        'td',
        {},
        replay.status === 'running' && guarded('POST /admin/replays/:id/pause', h('button', { type: 'button', class: 'secondary', onclick: () => change(replay, 'pause', 'Replay paused') }, 'Pause')),
        replay.status === 'paused' && guarded('POST /admin/replays/:id/resume', h('button', { type: 'button', class: 'secondary', onclick: () => change(replay, 'resume', 'Replay resumed') }, 'Resume')),
        isOpen(replay) && ' ',
        isOpen(replay) && guarded('POST /admin/replays/:id/cancel', h('button', { type: 'button', class: 'secondary', onclick: () => change(replay, 'cancel', 'Replay cancelled') }, 'Cancel')),
      ),
    );

  let polling: number | undefined;
  async function refresh(): Promise<void> {
    const replays = (await api<{ replays: Replay[] }>('GET', '/admin/replays')).replays.filter((replay) => replay.destinationId === destination.id);
    if (page.left()) return;
    replace(
      list,
      replays.length === 0
        ? h('p', { class: 'muted' }, 'No replay of this destination yet.')
        : h('table', { class: 'replays' }, h('thead', {}, h('tr', {}, ...['Started', 'Range', 'Status', 'Progress', ''].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, ...replays.map(row))),
    );
    window.clearTimeout(polling);
    if (replays.some(isOpen)) polling = window.setTimeout(() => void refresh().catch(() => undefined), POLL_MS);
  }

  replace(
    into,
    h('p', { class: 'muted' }, 'Sends the archived messages of this source received in a range to this destination again (a backfill for a new one), each with its original messageId and the X-Switchyard-Replay header. Run a dry run first: it counts what would be sent.'),
    form,
    formError,
    dryRunOut,
    list,
  );
  await refresh();
}
