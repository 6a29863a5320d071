/**
 * The `webhook-delivery` response header proposed for Standard Webhooks: a receiver tells the
 * sender to switch its URL off (`disable`, like a 410 Gone) or to stop retrying this one message
 * (`abort-message`). Case and surrounding spaces are ignored; anything else is no directive.
 */
export type DeliveryDirective = 'disable' | 'abort-message';

export const DELIVERY_DIRECTIVE_HEADER = 'webhook-delivery';

export function parseDeliveryDirective(value: string | string[] | undefined): DeliveryDirective | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  const directive = first?.trim().toLowerCase();
  return directive === 'disable' || directive === 'abort-message' ? directive : undefined;
}
