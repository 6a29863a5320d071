import type { DeliveryInput } from './types';

/**
 * What the Temporal Web UI shows without opening a payload (user metadata): a delivery workflow's
 * static summary and each attempt's summary. Anyone who can open the Web UI reads them, so they
 * say only what kind of message went where — type, event or page name, userId, webhook URL without
 * credentials, query or token-like path segments — never properties, traits, secrets or headers.
 */

const MAX_NAME_CHARS = 60;

/** One line, at most `max` characters. */
function oneLine(text: string, max: number): string {
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * The Web UI renders summaries as single-line markdown: a sender's event name or userId must not
 * become a link or an image there, so the characters that open one are escaped.
 */
function plain(text: string, max = MAX_NAME_CHARS): string {
  return oneLine(text, max).replace(/[\\[\]<>]/g, (c) => `\\${c}`);
}

/** `track · Order Completed · user u1 → 2 destinations`; `redelivery · track · …` when an operator asked for it again, `replay rpl_… · track · …` from a replay. */
export function deliverySummary(input: Pick<DeliveryInput, 'type' | 'userId' | 'visibleIds' | 'destinationIds' | 'message' | 'sealedMessage' | 'destinationBodies' | 'redelivery' | 'replay'>): string {
  const parts: string[] = input.redelivery ? ['redelivery', input.type] : input.replay ? [`replay ${input.replay.id}`, input.type] : [input.type];
  // A sealed body (crypto-shredding) has no readable name or user here: the summary names neither
  // (`track · sealed → …`) rather than keep a copy outside the user's data key.
  const subject = input.type === 'track' ? input.message?.event : input.type === 'page' || input.type === 'screen' ? input.message?.name : undefined;
  if (typeof subject === 'string' && subject.trim() !== '') parts.push(plain(subject));
  // A call sealed under its user's key (visibleIds, or any sealed body) is never
  // named here, whatever an input's plaintext fields say: the summary is outside the data key.
  const sealed = input.visibleIds !== undefined || input.sealedMessage !== undefined || Object.values(input.destinationBodies ?? {}).some((own) => own.sealedMessage !== undefined);
  parts.push(sealed ? 'sealed' : input.userId ? `user ${plain(input.userId)}` : 'anonymous');
  const count = input.destinationIds.length;
  return `${parts.join(' · ')} → ${count} destination${count === 1 ? '' : 's'}`;
}

/** Multi-line details under the summary: the ids an operator searches by, nothing from the body. */
export function deliveryDetails(input: Pick<DeliveryInput, 'sourceId' | 'messageId' | 'destinationIds'>): string {
  return [`source ${plain(input.sourceId, 200)}`, `message ${plain(input.messageId, 200)}`, `destinations ${input.destinationIds.map((id) => plain(id, 200)).join(', ')}`].join('\n');
}

/** 16+ characters mixing letters and digits: how webhook tokens in a path look (e.g. /api/webhooks/<id>/<token>). */
const TOKEN_LIKE = /^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9_\-.~%]{16,}$/;

/**
 * A webhook URL as the Web UI may show it: scheme, host, port and path. User info, query and
 * fragment are dropped and token-like path segments shown as `…`, since they are where webhook
 * URLs carry their credentials.
 */
export function webhookLabel(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(invalid URL)';
  }
  const path = parsed.pathname
    .split('/')
    .map((segment) => (TOKEN_LIKE.test(segment) ? '…' : segment))
    .join('/');
  return `${parsed.protocol}//${parsed.host}${path}`;
}

/** `POST webhook 1 https://host/path` (`· round 3` after the first round); the destination id when the URL is unknown. */
export function attemptSummary(webhookIndex: number, round: number, destinationId: string, label?: string): string {
  const where = label ? oneLine(label, 200) : `of ${plain(destinationId, 200)}`;
  return `POST webhook ${webhookIndex} ${where}${round > 1 ? ` · round ${round}` : ''}`;
}
