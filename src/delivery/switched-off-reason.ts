/**
 * Why a webhook URL was switched off by a 410 Gone, as the admin API and the portal show it for as
 * long as the URL stays off. It names the message so an operator can look at what was refused; a
 * delete notification's message id is derived from its user, so that one is named by its
 * regulation instead (a stored reason names no user id, hashed or not).
 */
export function goneReason(status: number, messageId: string, type: string, byHeader = false): string {
  // A receiver switches a URL off with 410 Gone, or with the `webhook-delivery: disable` header on any status.
  const answer = byHeader ? `HTTP ${status} with webhook-delivery: disable` : `HTTP ${status} Gone`;
  if (type !== 'delete') return `answered ${answer} to message ${messageId}`;
  // `<regulation id>:<user id or its hash>` (messages/delete-notification.ts).
  const regulationId = messageId.slice(0, Math.max(0, messageId.indexOf(':')));
  return `answered ${answer} to a delete notification${/^reg_[0-9a-f]+$/.test(regulationId) ? ` of regulation ${regulationId}` : ''}`;
}
