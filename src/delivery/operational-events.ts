/**
 * Operational webhooks, in Svix's event names so consumers written for Svix port over.
 * Pure: what an event carries, when a delivery raises one, which incident it belongs to, and how it
 * reads in Slack. Imported by workflow code, so no I/O, no clock, no randomness here.
 *
 * An event never carries an event body, a header value or a user id: only ids Switchyard made
 * (source, destination), the sender's messageId, the URL's index or mapping name, and the last
 * attempt's status and reason (the same words as the delivery's report).
 */

export const OPERATIONAL_EVENT_TYPES = [
  'message.attempt.failing',
  'message.attempt.exhausted',
  'message.attempt.recovered',
  'endpoint.disabled',
  'endpoint.enabled',
  'background_task.finished',
] as const;

export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

export const OPERATIONAL_FORMATS = ['standard', 'slack'] as const;
export type OperationalFormat = (typeof OPERATIONAL_FORMATS)[number];

/** Svix sends `message.attempt.failing` at the 4th failed attempt (svix/svix-webhooks#508): one failure is not an incident. */
export const FAILING_AFTER_ATTEMPTS = 4;

export interface LastAttempt {
  /** The receiver's HTTP status; 0 when no answer came (timeout, refused connection, switched-off URL). */
  responseStatusCode: number;
  error?: string;
  timestamp: string;
}

export interface OperationalEventData {
  sourceId: string;
  /** Every event but a background task's without one (a bulk redelivery of a whole source). */
  destinationId?: string;
  messageId?: string;
  webhookIndex?: number;
  mapping?: string;
  /** Names beside the ids, as the operator named them when the event was raised (the ids stay the keys). */
  sourceName?: string;
  destinationName?: string;
  /** The mapping's name (a mapping is known by its name): `mapping`, under the name the other two have. */
  mappingName?: string;
  lastAttempt?: LastAttempt;
  /** background_task.finished only: which job, of which kind, and how it ended. */
  task?: { kind: 'replay' | 'redelivery'; id: string; status: string };
}

/** The envelope every operational endpoint receives (format "standard"). */
export interface OperationalEvent {
  type: OperationalEventType;
  timestamp: string;
  data: OperationalEventData;
}

/** Longest error text an event carries: enough to name the failure, never a receiver's whole answer. */
export const MAX_ERROR_LENGTH = 300;

export const errorText = (reason: string): string => (reason.length > MAX_ERROR_LENGTH ? `${reason.slice(0, MAX_ERROR_LENGTH - 1)}…` : reason);

/** The HTTP status an attempt's reason names (`HTTP 503`, `HTTP 410 Gone`), else 0. */
export function statusOfReason(reason: string): number {
  const match = /\bHTTP (\d{3})\b/.exec(reason);
  return match ? Number(match[1]) : 0;
}

/** What a delivery lane (one destination, or one mapping of it) has sent so far, for transition gating. */
export interface LaneIncident {
  failedAttempts: number;
  failingSent: boolean;
}

/**
 * The events one attempt's outcome raises for its lane, given what the lane sent before: `failing`
 * once, at the 4th failed attempt; `recovered` only for a success after `failing` was sent;
 * `exhausted` when the lane gives up for good. Transition-gated: a lane's 50th failure raises nothing.
 */
export function laneTransition(before: LaneIncident, attempt: 'failed' | 'succeeded' | 'exhausted'): { after: LaneIncident; raise?: 'message.attempt.failing' | 'message.attempt.recovered' | 'message.attempt.exhausted' } {
  if (attempt === 'exhausted') return { after: before, raise: 'message.attempt.exhausted' };
  if (attempt === 'succeeded') return before.failingSent ? { after: { failedAttempts: before.failedAttempts, failingSent: false }, raise: 'message.attempt.recovered' } : { after: before };
  const after = { failedAttempts: before.failedAttempts + 1, failingSent: before.failingSent };
  if (!before.failingSent && after.failedAttempts === FAILING_AFTER_ATTEMPTS) return { after: { ...after, failingSent: true }, raise: 'message.attempt.failing' };
  return { after };
}

/** Where an incident scoped to a delivery lane and a window is, and how that window is cut. */
export interface IncidentScope {
  /** The delivery run: the incident of a message event when there is no window (`windowMs` 0). */
  run?: string;
  /** When a URL was switched off: the incident a disable or enable ends. */
  since?: string;
  /**
   * OPERATIONAL_EVENT_WINDOW: a message event's incident is its lane's (destination, and webhook
   * or mapping) in the window of this length its timestamp falls in, counted from the epoch. 0 or
   * absent: one incident per delivery run, per message (Svix's behaviour).
   */
  windowMs?: number;
}

/** The start of the window `timestamp` falls in, as an ISO time; undefined with no window or no readable time. */
export function windowStart(timestamp: string, windowMs: number | undefined): string | undefined {
  const at = Date.parse(timestamp);
  if (!windowMs || windowMs <= 0 || !Number.isFinite(at)) return undefined;
  return new Date(Math.floor(at / windowMs) * windowMs).toISOString();
}

/**
 * The incident an event belongs to, as its Temporal workflow id on the operational lane: the same
 * incident raised twice (a retried activity, several workers seeing the same 410, a replayed
 * workflow task, another message failing at the same lane in the same window) starts one workflow,
 * so one event goes out.
 *
 * A message event (`failing`, `exhausted`, `recovered`) names its lane and window: however many
 * messages fail at one destination, an on-call person gets one event of each type per window, and
 * the operational lane never carries one per message. The event's timestamp is the delivery
 * workflow's time when it was raised, so a retried raise names the same window. Without a window,
 * the delivery run: a redelivery is a new incident.
 */
export function incidentId(event: OperationalEvent, scope: IncidentScope): string {
  const { data } = event;
  const where = data.mapping !== undefined ? `mapping:${data.mapping}` : data.webhookIndex !== undefined ? `webhook:${data.webhookIndex}` : 'destination';
  if (event.type === 'background_task.finished') return `operational:${event.type}:${data.task?.kind}:${data.task?.id}`;
  if (event.type === 'endpoint.disabled' || event.type === 'endpoint.enabled') return `operational:${event.type}:${data.destinationId}:${where}:${scope.since ?? ''}`;
  const window = windowStart(event.timestamp, scope.windowMs);
  if (window !== undefined) return `operational:${event.type}:${data.destinationId}:${where}:window:${window}`;
  return `operational:${event.type}:${data.destinationId}:${where}:${scope.run ?? data.messageId ?? ''}`;
}

/**
 * The event with the names an on-call person reads beside the ids: the source's and destination's
 * (when they still exist) and the mapping's. Names are not part of the incident (incidentId reads ids).
 */
export function withNames(event: OperationalEvent, names: { sourceName?: string; destinationName?: string }): OperationalEvent {
  const { data } = event;
  return {
    ...event,
    data: {
      ...data,
      ...(names.sourceName !== undefined && { sourceName: names.sourceName }),
      ...(names.destinationName !== undefined && { destinationName: names.destinationName }),
      ...(data.mapping !== undefined && { mappingName: data.mapping }),
    },
  };
}

/** Whether an endpoint subscribed to `types` gets an event of `type` (an empty list: every type, as in Svix). */
export const subscribes = (types: readonly string[], type: OperationalEventType): boolean => types.length === 0 || types.includes(type);

const headline: Record<OperationalEventType, string> = {
  'message.attempt.failing': 'is failing',
  'message.attempt.exhausted': 'gave up on a message',
  'message.attempt.recovered': 'recovered',
  'endpoint.disabled': 'switched a webhook URL off',
  'endpoint.enabled': 'switched a webhook URL back on',
  'background_task.finished': 'finished a background task',
};

const named = (name: string | undefined, id: string) => (name ? `${name} (${id})` : id);

/** `format: "slack"`: the one line an incoming webhook shows; the same facts as the envelope, no more. */
export function slackText(event: OperationalEvent): string {
  const { data } = event;
  const where = data.mapping !== undefined ? ` mapping ${data.mapping}` : data.webhookIndex !== undefined ? ` webhook ${data.webhookIndex}` : '';
  const subject = data.destinationId !== undefined ? `destination ${named(data.destinationName, data.destinationId)}` : `source ${named(data.sourceName, data.sourceId)}`;
  const parts = [`Switchyard: ${subject}${where} ${headline[event.type]} (${event.type})`];
  if (data.messageId !== undefined) parts.push(`message ${data.messageId}`);
  if (data.lastAttempt) parts.push(`last attempt: ${data.lastAttempt.responseStatusCode || 'no answer'}${data.lastAttempt.error ? ` ${data.lastAttempt.error}` : ''}`);
  if (data.task) parts.push(`${data.task.kind} ${data.task.id} ${data.task.status}`);
  return parts.join('; ');
}

/** The body an endpoint of this format is sent. */
export const operationalBody = (event: OperationalEvent, format: OperationalFormat): string => JSON.stringify(format === 'slack' ? { text: slackText(event) } : event);
