/** Shapes shared by the API, the delivery workflow and its activities. Plain data only: they cross Temporal. */

export const MESSAGE_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
export type CallType = (typeof MESSAGE_TYPES)[number];
export type MessageType = CallType | 'delete';

/** The JSON body POSTed to a webhook URL (seed: "Message bodies sent to a webhook URL"). */
export type MessageBody = Record<string, unknown> & { type: MessageType };

/**
 * A message body sealed under its subject's data key (privacy/sealed-body.ts): `subject` is the
 * keyed hash the key is stored by; iv and data (ciphertext ‖ tag) base64. Opened only by the
 * attempt activity and by readers for the operator; the workflow passes it through untouched.
 */
export interface SealedBody {
  sealed: 1;
  subject: string;
  iv: string;
  data: string;
  /**
   * A check value of the data key it was sealed under (privacy/sealed-body.ts
   * keyCheck), so a body sealed under a key since destroyed and replaced (the user erased, then
   * back) reads as erased, apart from one altered. Absent in bodies sealed before it.
   */
  keyCheck?: string;
  /**
   * The ids of the call the body came from, sealed under the same key (nonce ‖
   * ciphertext ‖ tag, base64): what the send-time erasure and suppression checks read, whatever a
   * destination's filters left in the body. Absent in bodies sealed before it.
   */
  ids?: string;
  /**
   * The message's W3C trace context (tracing/trace-carrier.ts), sealed under the same key
   * in the same way, so every attempt of every destination reads it beside the body without the
   * workflow passing anything new. Absent while tracing is off, and in bodies sealed before it.
   */
  trace?: string;
}

/** A message's W3C trace context (tracing/trace-carrier.ts), as plain data. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** Timing knobs, fixed per message when it is accepted so a config change never alters a running delivery. */
export interface DeliveryPolicy {
  retryWindowMs: number;
  timeoutMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /**
   * The first attempt to each destination runs as a local activity (see deliverMessage). Optional so
   * that workflows accepted before it existed replay their original shape: regular activities only.
   */
  firstAttemptLocal?: boolean;
  /**
   * The retry window is a hard deadline: every attempt's schedule-to-close is the time
   * left in the window, and no attempt starts or sends after it. Carried in the policy, like
   * firstAttemptLocal, so workflows accepted before it replay their original commands without a
   * patch marker in every new delivery's history.
   */
  hardWindow?: boolean;
  /**
   * A delivery that succeeded writes no last status: its run completing says it, so the
   * workflow skips the `delivered` upsert, one history event and one visibility write less per
   * message; SwitchyardStatus stays `delivering` (or `retrying`) and readers take a completed run
   * with either as delivered (temporal/delivery-query.ts). Carried in the policy, like hardWindow,
   * so workflows accepted before it still upsert `delivered` on replay, with no patch marker.
   */
  deliveredImplied?: boolean;
  /**
   * Flow control: before sending, each attempt asks whether its destination is paused,
   * throttled (`maxRequestsPerSecond`) or its URL backpressured (429/503 with Retry-After), and
   * waits without counting: held time moves the retry window's end, up to this much in total per
   * destination (DELIVERY_MAX_HOLD), then the delivery fails with that reason. Carried in the policy,
   * like hardWindow: workflows accepted before it replay their original commands, no patch marker.
   */
  maxHoldMs?: number;
  /** Longest wait between two asks of a held (paused) delivery whether its destination was resumed (DELIVERY_HOLD_CHECK_INTERVAL). */
  holdCheckMs?: number;
}

/** Workflow input: names destinations, never their secrets or headers (those stay in the store). */
export interface DeliveryInput {
  sourceId: string;
  messageId: string;
  type: MessageType;
  userId?: string;
  /**
   * With a sealed body: the keyed hashes its workflow is searched by (SwitchyardUserId /
   * SwitchyardAnonymousId), in place of `userId` and the body's anonymousId, so nothing outside the
   * user's data key names the user. Absent in plaintext inputs, whose ids are hashed at start.
   */
  visibleIds?: { userId?: string; anonymousId?: string };
  destinationIds: string[];
  /**
   * The body POSTed, in the clear: delete notifications, messages with no user id, and every input
   * from before crypto-shredding. Absent when `sealedMessage` carries the body.
   */
  message?: MessageBody;
  /** The body sealed under its subject's data key: a regulation destroying the key erases every copy. */
  sealedMessage?: SealedBody;
  /**
   * Per destination whose filters made its body different, the body it gets instead
   * (one of message / sealedMessage, as above). Absent for every other destination, and in inputs
   * accepted before filters: the attempt request is then the same as it always was.
   */
  destinationBodies?: Record<string, { message?: MessageBody; sealedMessage?: SealedBody }>;
  policy: DeliveryPolicy;
  /**
   * Per destination id, its webhook URLs as the Web UI may show them (summary.ts webhookLabel: no
   * credentials, query or tokens), as configured when the message was accepted; only the attempts'
   * summaries read them. Absent in workflows accepted before them.
   */
  webhookLabels?: Record<string, string[]>;
  /**
   * Present when an operator asked for this message to be delivered again (admin API): when, and
   * the run it follows, and the bulk redelivery job that asked (absent for a single redelivery).
   * Optional, and read by nothing in the workflow, so histories replay unchanged.
   */
  redelivery?: { requestedAt: string; previousRunId: string; jobId?: string };
  /**
   * Present when a replay of the archive sent this message (workflow id
   * `replay:<id>:<messageId>`): every request carries `X-Switchyard-Replay: <id>`. Optional, and
   * read only into the attempts' input, so histories replay unchanged.
   */
  replay?: { id: string };
  /**
   * Per actions destination, the names of the mappings whose trigger the message met
   * when it was accepted; each is its own request with its own retries. Absent for `webhooks`
   * destinations and in every input from before Actions destinations, which replay unchanged.
   */
  mappings?: Record<string, string[]>;
  /**
   * The message's W3C trace context, in the clear, only in an input whose bodies are (no
   * seal: seal-bodies.ts); a sealed input carries it inside its sealed bodies (SealedBody.trace).
   * Absent while tracing is off and in every input from before it.
   */
  trace?: TraceCarrier;
}

/** What one POST to one webhook URL came to. */
export type AttemptOutcome =
  | { kind: 'success'; status: number; disablesWebhook?: boolean }
  | { kind: 'retry'; status?: number; reason: string; retryAfterMs?: number }
  | { kind: 'permanent'; status?: number; reason: string; disablesWebhook?: boolean };

export interface AttemptRequest {
  destinationId: string;
  webhookIndex: number;
  messageId: string;
  /** Exactly one of message / sealedMessage, passed through from the DeliveryInput unchanged. */
  message?: MessageBody;
  sealedMessage?: SealedBody;
  timeoutMs: number;
  round: number;
  /**
   * The mapping of an actions destination this attempt sends (rendered from the event
   * here, in the activity); `webhookIndex` is then 0. Absent for `webhooks` destinations.
   */
  mapping?: string;
  /**
   * End of the retry window (epoch ms): no request is sent after it, and one sent before it waits
   * for its answer at most until then. Absent for workflows accepted before the window was hard.
   */
  notAfterMs?: number;
  /** Flow control (policy.maxHoldMs): the fields below appear only in deliveries accepted with it. */
  flowControl?: boolean;
  /** The send slot a throttled wait reserved (epoch ms): this ask sends in it without reserving another. */
  reservedSlotMs?: number;
  /** What the destination may still be held for this message; no slot is reserved further out. */
  holdLeftMs?: number;
  /** The hold this message just waited out, for health and metrics (the activity records it). */
  afterHold?: { reason: HoldReason; ms: number };
  /**
   * The URL's backpressure pause this delivery has waited out on its own clock (the
   * pause's `pressureUntilMs`, passed back unread): that pause holds it no longer, whatever the
   * store's clock says is left of it. A later pause (another 429/503) holds it again.
   */
  waitedOutPressureMs?: number;
  /** The replay that sent this message (DeliveryInput.replay): the request names it in a header. */
  replayId?: string;
  /** DeliveryInput.trace, passed through unread (an unsealed input's trace context). */
  trace?: TraceCarrier;
  /**
   * A function destination's version this delivery runs: the one deployed when its first attempt
   * was asked (that attempt's result names it), so its retries and a replay of its history run the
   * same code whatever is deployed since. Absent on the first ask and for other destinations.
   */
  functionVersion?: number;
}

/** Why an attempt sent nothing and waits, without counting as an attempt. */
export type HoldReason = 'paused' | 'throttled' | 'backpressure';

/** A hold answer: `waitMs` absent for `paused` (the workflow asks again on its own schedule). */
export interface Hold {
  reason: HoldReason;
  /** How long to wait from now (relative, so no clock but the waiter's times it). */
  waitMs?: number;
  reservedSlotMs?: number;
  /** Names the backpressure pause waited for (the store's clock: compared with nothing in the workflow). */
  pressureUntilMs?: number;
}

/** A URL's backpressure pause as an attempt left it: `leftMs` from now; `untilMs` names it (see Hold). */
export interface Pressure {
  untilMs: number;
  leftMs: number;
}

export interface AttemptResult {
  /** false when the destination was switched off or deleted since the message was accepted. */
  destinationEnabled: boolean;
  webhookCount: number;
  outcome?: AttemptOutcome;
  durationMs?: number;
  /**
   * Nothing was sent: this was a local attempt and the worker does not know the webhook to answer
   * fast, so the workflow makes the same attempt as a regular activity (a hanging local activity
   * would hold its workflow task, and with it the worker's intake of new workflows).
   */
  deferred?: boolean;
  /**
   * Nothing was sent: this worker already runs WORKER_MAX_IN_FLIGHT_PER_WEBHOOK attempts to the
   * webhook. Not a failed attempt: the workflow waits a little and asks the same URL again. The
   * result also carries a retryable outcome, which is how workflows from before this rule read it.
   */
  busy?: boolean;
  /** Nothing was sent: the destination is paused or throttled, or the URL backpressured; wait, then ask again. */
  held?: Hold;
  /** The answer (429/503 with Retry-After) paused the URL for every message: a round wait at least `leftMs` long waits it out. */
  pressure?: Pressure;
  /**
   * Nothing was sent: a URL of this destination already accepted the message in this delivery run
   * (an attempt reported lost whose answer came after all), and this is its index, which the
   * delivery report names.
   */
  acceptedBy?: number;
  /** A function destination, or a destination's insert function: the version the attempt ran (or, deferred, will run); the workflow passes it to every later attempt. */
  functionVersion?: number;
  /**
   * A function destination's handler (or a destination's insert function) skipped the message
   * (EventNotSupported, a missing handler) or filtered it out (DropEvent): the destination stops here
   * with this reason, neither delivered nor failed.
   */
  stopped?: string;
  /**
   * A function destination's (or insert function's) console output of this attempt (4 KB at most, sensitive settings
   * masked): sealed under the message's data key like its body (`sealedLogs`, `{logs}` inside), in
   * the clear only when the body is. Delivery detail shows it with the attempt, to payloads:read.
   */
  logs?: string[];
  /** The message of the error the function threw (masked); in `sealedLogs` beside the logs when the body is sealed. */
  errorMessage?: string;
  sealedLogs?: SealedBody;
}

export type DestinationStatus = 'delivered' | 'failed' | 'stopped';

export interface DestinationReport {
  destinationId: string;
  status: DestinationStatus;
  /** Index of the webhook URL that accepted the message. */
  webhookIndex?: number;
  rounds: number;
  reason?: string;
  /** An actions destination's requests, one per mapping whose trigger the message met. */
  mappings?: MappingReport[];
}

/** How one mapping's request of an actions destination ended. */
export interface MappingReport {
  name: string;
  status: DestinationStatus;
  rounds: number;
  reason?: string;
}

export interface DeliveryReport {
  messageId: string;
  destinations: DestinationReport[];
}
