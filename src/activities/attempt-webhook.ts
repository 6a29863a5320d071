import { Context, log } from '@temporalio/activity';
import type { Agent } from 'undici';
import { webhookRequestHeaders } from '../delivery/request';
import { REPLAY_HEADER } from '../delivery/replay';
import { goneReason } from '../delivery/switched-off-reason';
import { attemptBudgetMs } from '../delivery/retry-window';
import { isSlowLane } from '../delivery/slow-lane';
import { activeSigningSecrets, standardWebhookId } from '../delivery/standard-webhooks';
import type { AttemptOutcome, AttemptResult, MessageBody, Pressure } from '../delivery/types';
import type { OpenAttemptRequest as AttemptRequest } from './erased-users';
import type { Destination, DestinationWebhook, Store } from '../store/types';
import type { WebhookTraffic } from './webhook-traffic';
import { postWebhook } from './post-webhook';
import type { Metrics } from '../metrics';
import type { AttemptRecorder } from './health-recorder';
import { makeAdmission, type FlowMetrics } from './admit-attempt';
import { backpressureMs } from '../delivery/flow-control';
import { mappedTarget, webhookTarget, type RenderedRequest } from './request-target';
import { sendAuthorized, type Outbound } from './send-authorized';
import type { LiveLag } from './live-lag';
import { countDestination } from '../metrics';
import { tracedAttempt } from '../tracing/attempt-span';
import { AcceptedAttempts, attemptLane } from './accepted-attempts';
import type { AttemptFunction } from './attempt-function';
import type { InsertFunction } from './insert-function';

/** Told when an attempt's answer has just switched its URL off (activities/operational-events.ts). */
export type SwitchedOff = (at: { sourceId: string; destinationId: string; webhookIndex: number; url: string; status: number; reason: string }) => Promise<void>;

type AttemptMetrics = Pick<Metrics, 'deliveryAttempts' | 'attemptDuration' | 'attemptsInFlight'> & Partial<FlowMetrics> & Partial<Pick<Metrics, 'deliveries'>>;

/**
 * Reads the destination at send time — so a new secret, new headers or switching the destination
 * off take effect on the next attempt — and keeps secrets and header values out of workflow history.
 */
/** Whether this attempt runs as a local activity (inside the workflow task) rather than a regular one. */
function runningLocally(): boolean {
  try {
    return Context.current().info.isLocal;
  } catch {
    return false;
  }
}

/** Whether this attempt was made in the slow lane (it found its webhook busy before: delivery/slow-lane.ts). */
function runningInSlowLane(): boolean {
  try {
    return isSlowLane(Context.current().info.taskQueue);
  } catch {
    return false;
  }
}

/**
 * `backpressureBoundMs`: the longest a URL's 429/503 Retry-After pauses it for every message (the
 * retry window: no delivery could wait longer anyway).
 */
/**
 * A live message's first request (not after a hold or in the slow lane, first round, first URL):
 * how long after it was received it went out, the signal replays are paced by; and a replayed
 * request, which marks its window as not unhurried.
 */
function recordLiveLag(liveLag: LiveLag | undefined, req: AttemptRequest, sentAt: number): void {
  if (!liveLag) return;
  if (req.replayId !== undefined) return liveLag.replaySent(sentAt);
  if (req.round !== 1 || req.webhookIndex !== 0 || req.afterHold || runningInSlowLane()) return;
  const receivedAt = typeof req.message.receivedAt === 'string' ? Date.parse(req.message.receivedAt) : NaN;
  if (Number.isFinite(receivedAt)) liveLag.record(sentAt - receivedAt, sentAt);
}

export function makeAttemptWebhook(
  store: Store,
  agent: Agent,
  traffic: WebhookTraffic,
  metrics?: AttemptMetrics,
  health?: AttemptRecorder,
  backpressureBoundMs = Number.MAX_SAFE_INTEGER,
  outbound?: Outbound,
  liveLag?: LiveLag,
  switchedOff?: SwitchedOff,
  attemptFunction?: AttemptFunction,
  insertFunction?: InsertFunction,
) {
  // Each destination's outcomes show at 0 from its first attempt on.
  const counted = new Set<string>();
  const accepted = new AcceptedAttempts();
  const admit = makeAdmission(store, metrics?.heldMessages && metrics.throttledWaits && metrics.backpressuredWaits ? (metrics as FlowMetrics) : undefined);
  /** One signed request (a POST of the event, or a mapping's request); a 410 Gone also switches a webhook URL off in the store. */
  async function send(req: AttemptRequest, destination: Destination, webhook: DestinationWebhook, target: RenderedRequest, timeoutMs: number): Promise<{ outcome: AttemptOutcome; durationMs: number; pressure?: Pressure }> {
    const fields = { destinationId: req.destinationId, webhookIndex: req.webhookIndex, ...(req.mapping !== undefined && { mapping: req.mapping }), round: req.round, messageId: req.messageId };
    const body = target.body;
    const started = Date.now();
    const headers = webhookRequestHeaders(webhook.headers, destination.sharedSecret, body, {
      secrets: activeSigningSecrets(destination.signing, started),
      id: standardWebhookId(req.messageId),
      timestampSeconds: Math.floor(started / 1000),
    });
    if (req.replayId !== undefined) headers[REPLAY_HEADER] = req.replayId;
    // Counted only here, where a request goes out: busy and deferred attempts, a switched-off URL
    // and a window already over send nothing. Labels are the outcome kind alone (no URL, no id).
    metrics?.attemptsInFlight.inc();
    let outcome: AttemptOutcome;
    try {
      // The destination's outbound auth and client certificate, when it has them.
      // The attempt's span (tracing on), and its traceparent unless the destination says not.
      const subject = { ...fields, method: target.method, url: webhook.url, ...(req.trace && { trace: req.trace }) };
      outcome = await tracedAttempt(subject, destination.propagateTraceContext, headers, (sent) =>
        sendAuthorized(destination, { url: webhook.url, headers: sent, body, method: target.method }, timeoutMs, outbound ?? { agentFor: () => agent }, postWebhook),
      );
    } finally {
      metrics?.attemptsInFlight.dec();
    }
    const durationMs = Date.now() - started;
    if (metrics && !counted.has(req.destinationId)) {
      counted.add(req.destinationId);
      countDestination(metrics, req.destinationId);
    }
    metrics?.deliveryAttempts.inc({ outcome: outcome.kind, destination: req.destinationId });
    metrics?.attemptDuration.observe({ outcome: outcome.kind }, durationMs / 1000);
    // Webhook health: the same attempts, per destination and URL, added up in memory (flushed every HEALTH_FLUSH_INTERVAL).
    health?.record(req.destinationId, webhook.url, started + durationMs, outcome, durationMs);
    const logged = { ...fields, durationMs, status: 'status' in outcome ? outcome.status : undefined };
    if (outcome.kind === 'success') log.debug('webhook accepted', logged);
    else log.warn(`webhook attempt failed: ${outcome.reason}`, { ...logged, outcome: outcome.kind });
    // A 429 or 503 with Retry-After pauses the URL for every message, not only this one,
    // for that long from the store's now (no worker's clock in it).
    const pauseMs = outcome.kind === 'retry' ? backpressureMs(outcome.status, outcome.retryAfterMs, backpressureBoundMs) : undefined;
    let pressure: Pressure | undefined;
    if (pauseMs !== undefined) {
      pressure = await store.flowControl.backpressure(req.destinationId, webhook.url, pauseMs, `HTTP ${outcome.status} with Retry-After`);
      log.info('webhook URL backpressured', { ...fields, pauseMs });
    }
    if (outcome.kind !== 'retry' && outcome.disablesWebhook && req.mapping === undefined) {
      const reason = goneReason(outcome.status ?? 410, req.messageId, String(req.message.type), outcome.status !== 410);
      if (await store.destinations.disableWebhook(req.destinationId, webhook.url, reason)) {
        log.warn('webhook URL switched off', { ...fields, reason });
        await switchedOff?.({ sourceId: destination.sourceId, destinationId: req.destinationId, webhookIndex: req.webhookIndex, url: webhook.url, status: outcome.status ?? 410, reason });
      }
    }
    return { outcome, durationMs, ...(pressure && { pressure }) };
  }

  /** Each destination's outcomes show at 0 from its first attempt on. */
  function countOnce(destinationId: string): void {
    if (!metrics || counted.has(destinationId)) return;
    counted.add(destinationId);
    countDestination(metrics, destinationId);
  }

  /** A destination function's attempt, counted as a webhook's is: by outcome kind and destination. */
  async function functionAttempt(req: AttemptRequest, destination: Destination): Promise<AttemptResult> {
    if (!attemptFunction) return { destinationEnabled: true, webhookCount: 1, outcome: { kind: 'retry', reason: 'function:error: this worker runs no functions' } };
    const local = runningLocally();
    // Paused or rate-limited, its attempt is held as a webhook's is, before the handler runs (its
    // fetch calls are real): the version is pinned on the hold, so the run after it is the one the
    // delivery started with. The first ask, a local activity, only pins the version and defers.
    if (req.flowControl && !local) {
      const held = await admit(req, destination, undefined, Date.now());
      if (held) {
        const pinned = await attemptFunction(req, destination, { local: true });
        return { destinationEnabled: true, webhookCount: 1, ...(pinned.functionVersion !== undefined && { functionVersion: pinned.functionVersion }), held };
      }
    }
    const result = await attemptFunction(req, destination, { local });
    if (result.deferred) return result;
    if (metrics && !counted.has(req.destinationId)) {
      counted.add(req.destinationId);
      countDestination(metrics, req.destinationId);
    }
    if (result.outcome) {
      metrics?.deliveryAttempts.inc({ outcome: result.outcome.kind, destination: req.destinationId });
      metrics?.attemptDuration.observe({ outcome: result.outcome.kind }, (result.durationMs ?? 0) / 1000);
    }
    return result;
  }

  return async function attemptWebhook(req: AttemptRequest): Promise<AttemptResult> {
    const destination = await store.destinations.get(req.destinationId);
    if (!destination || !destination.enabled) return { destinationEnabled: false, webhookCount: 0 };
    if (destination.type === 'function') return functionAttempt(req, destination);
    // A mapping's request is one URL; what it sends is rendered here, from the opened event.
    const targetOf = (message: MessageBody) => (req.mapping === undefined ? webhookTarget(destination, { webhookIndex: req.webhookIndex, message }) : mappedTarget(destination, req.mapping, req.webhookIndex, message));
    const found = targetOf(req.message);
    if ('count' in found) return { destinationEnabled: true, webhookCount: found.count };
    const { webhookCount, webhook } = found;
    let target = found.target;
    // Once a receiver of this lane accepted the message in this run, nothing is sent again: this is
    // the same attempt run again after a stall, or the one after an attempt reported lost.
    const lane = attemptLane(req.messageId, req.destinationId, req.mapping);
    const earlier = lane === undefined ? undefined : accepted.recall(lane, Date.now());
    if (earlier) {
      log.info('not sent again: this delivery run already had the message accepted', { destinationId: req.destinationId, webhookIndex: req.webhookIndex, acceptedBy: earlier.webhookIndex, ...(req.mapping !== undefined && { mapping: req.mapping }), round: req.round, messageId: req.messageId });
      return { destinationEnabled: true, webhookCount, outcome: { kind: 'success', status: earlier.status }, durationMs: 0, acceptedBy: earlier.webhookIndex };
    }
    if (webhook.disabled) {
      return { destinationEnabled: true, webhookCount, outcome: { kind: 'permanent', reason: `webhook switched off (${webhook.disabled.at}): ${webhook.disabled.reason}` } };
    }
    // Its insert function, when it has one switched on, runs here: after the filters, consent and the
    // mappings' triggers (which chose this delivery), before the mapping renders and the request is
    // signed. The event it returns is what is rendered and sent; what the attempt carries of the run
    // (its pinned version, its sealed console output) rides on whatever this attempt answers.
    let carried: Partial<AttemptResult> = {};
    const instance = destination.insertFunction;
    if (instance?.enabled) {
      if (!insertFunction) return { destinationEnabled: true, webhookCount, outcome: { kind: 'retry', reason: 'function:error: this worker runs no functions' } };
      // A paused destination's attempt is held below whatever it would send: the function is not run
      // on every check of the pause (its fetch calls are real), only its version pinned.
      const paused = req.flowControl === true && destination.paused && !runningLocally();
      const ran = await insertFunction(req, destination, instance, { local: runningLocally() || paused });
      if ('answer' in ran && paused && ran.answer.deferred) carried = { functionVersion: ran.answer.functionVersion };
      else if ('answer' in ran) {
        if (ran.answer.outcome && !ran.answer.deferred) {
          countOnce(req.destinationId);
          metrics?.deliveryAttempts.inc({ outcome: ran.answer.outcome.kind, destination: req.destinationId });
        }
        return { destinationEnabled: true, webhookCount, ...ran.answer };
      } else {
        carried = ran.carried;
        const rendered = targetOf(ran.event);
        if ('count' in rendered) return { destinationEnabled: true, webhookCount: rendered.count, ...carried };
        target = rendered.target;
      }
    }
    if ('renderFailure' in target) {
      // Never dropped silently: the request fails with the reason, logged, and counted in the URL's health.
      const outcome: AttemptOutcome = { kind: 'permanent', reason: target.renderFailure };
      log.warn(target.renderFailure, { destinationId: req.destinationId, mapping: req.mapping, round: req.round, messageId: req.messageId });
      health?.record(req.destinationId, webhook.url, Date.now(), outcome, 0);
      return { destinationEnabled: true, webhookCount, outcome, ...carried };
    }

    // Keyed by destination and URL: one customer's hanging webhook cannot use up another's share,
    // even when both point at the same host.
    const key = `${req.destinationId} ${webhook.url}`;
    if (runningLocally() && !traffic.answersFast(key, Date.now())) return { destinationEnabled: true, webhookCount, deferred: true };
    // The hold just waited out is recorded on the ask after it, whatever that ask then finds (busy included).
    if (req.flowControl && req.afterHold) health?.recordHold(req.destinationId, webhook.url, Date.now(), req.afterHold.reason, req.afterHold.ms);
    // The retry window is a hard deadline: a task picked up after it (a worker back from an outage)
    // sends nothing, and a request sent before it waits for its answer at most until then.
    const windowEnded = (): AttemptResult => ({ destinationEnabled: true, webhookCount, ...carried, outcome: { kind: 'retry', reason: 'retry window ended before the attempt started; no request was sent' } });
    if (attemptBudgetMs(req.timeoutMs, req.notAfterMs, Date.now()) <= 0) return windowEnded();
    // In the slow lane the attempt waits here for the webhook's room (the attempts holding it end
    // within one timeout), holding one of the lane's slots, not one of the delivery queue's.
    const finish = runningInSlowLane() ? await traffic.waitToStart(key, req.timeoutMs) : traffic.tryStart(key, Date.now());
    if (!finish) {
      const reason = `webhook busy: ${traffic.maxInFlight} attempts to it already in flight in this worker (WORKER_MAX_IN_FLIGHT_PER_WEBHOOK)`;
      // `busy`: today's workflow waits its turn on this URL. The retryable outcome is what workflows
      // from before that rule read: for them a slot frees within one delivery timeout.
      return { destinationEnabled: true, webhookCount, ...carried, busy: true, outcome: { kind: 'retry', reason, retryAfterMs: req.timeoutMs } };
    }
    let sentAt: number | undefined;
    try {
      // Flow control is asked with the webhook's room in hand, right before sending: a send slot
      // taken before waiting for room (the slow lane waits up to a timeout) would go out late,
      // next to the slot after it, and break the destination's spacing.
      const held = req.flowControl ? await admit(req, destination, webhook, Date.now()) : undefined;
      if (held) return { destinationEnabled: true, webhookCount, ...carried, held };
      const timeoutMs = attemptBudgetMs(req.timeoutMs, req.notAfterMs, Date.now());
      if (timeoutMs <= 0) return windowEnded();
      // Asked again right before sending: an attempt of this run that stalled before it sent may have
      // had its answer meanwhile (the admission above can wait).
      const stillSendingNow = lane === undefined ? undefined : accepted.inFlight(lane);
      if (stillSendingNow) await stillSendingNow;
      const acceptedMeanwhile = lane === undefined ? undefined : accepted.recall(lane, Date.now());
      if (acceptedMeanwhile) return { destinationEnabled: true, webhookCount, outcome: { kind: 'success', status: acceptedMeanwhile.status }, durationMs: 0, acceptedBy: acceptedMeanwhile.webhookIndex };
      sentAt = Date.now();
      recordLiveLag(liveLag, req, sentAt);
      const sent = await send(req, destination, webhook, target, timeoutMs);
      if (lane !== undefined && sent.outcome.kind === 'success') accepted.remember(lane, { webhookIndex: req.webhookIndex, status: sent.outcome.status, at: Date.now() });
      return { destinationEnabled: true, webhookCount, ...carried, ...sent };
    } finally {
      finish(sentAt === undefined ? undefined : Date.now() - sentAt);
    }
  };
}
