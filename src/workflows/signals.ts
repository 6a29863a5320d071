/**
 * Signal names the API sends to delivery workflows, by name: the client side never loads workflow
 * code. Pure constants, imported by both.
 */

/** A destination was resumed (issue 20): its held deliveries ask again now instead of at their next check. Argument: the destination id. */
export const DESTINATION_RESUMED = 'destinationResumed';
