/**
 * The PostgreSQL channel the store NOTIFYs on, in the same transaction, whenever a destination, its
 * switched-off webhooks or (by cascade) its source change. The payload is the destination id and
 * nothing else: no URL, header or secret ever goes through it.
 */
export const DESTINATION_CHANNEL = 'switchyard_destinations';
