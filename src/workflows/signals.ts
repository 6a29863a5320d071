/**
 * Signal names the API sends to delivery workflows, by name: the client side never loads workflow
 * code. Pure constants, imported by both.
 */

/** A destination was resumed: its held deliveries ask again now instead of at their next check. Argument: the destination id. */
export const DESTINATION_RESUMED = 'destinationResumed';

/**
 * A destination's flow control changed under its held deliveries: its maxRequestsPerSecond
 * (slots reserved under the old limit are given up and taken again under the new one) or a URL's
 * backpressure was cleared. They ask again now instead of at the end of their wait. Argument: the destination id.
 */
export const FLOW_CHANGED = 'destinationFlowChanged';
