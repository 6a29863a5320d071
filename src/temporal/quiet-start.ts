import type { LogLevel } from '@temporalio/worker';

/**
 * Quiet start: what the Temporal SDK says at start that nobody acts on, moved to DEBUG
 * so `npm start` piped to a file or a log shipper shows the banner and real problems only.
 */

/**
 * The slow lanes (delivery/slow-lane.ts) are activity-only workers by design: the SDK's "No
 * workflows registered" warning (and its Nexus note) describe that design, not a fault, on every
 * start, at a terminal or not.
 */
const BY_DESIGN = new Set(['No workflows registered, not polling for workflow tasks', 'No Nexus services registered, not polling for Nexus tasks']);

export function sdkLineLevel(level: LogLevel, message: string): LogLevel {
  return BY_DESIGN.has(message) ? 'DEBUG' : level;
}

/**
 * The workflow bundler logs webpack's whole stats text at INFO. At a terminal it is readable; read
 * by a program it is one JSON line of several KB per start, so then it goes to DEBUG (errors stay
 * errors, and "Workflow bundle created" stays: it says the bundle is there and how big).
 */
export function bundlerLineLevel(level: LogLevel, message: string, stdoutIsTTY: boolean): LogLevel {
  return level === 'INFO' && !stdoutIsTTY && message !== 'Workflow bundle created' ? 'DEBUG' : level;
}
