import type { DestinationReport, MappingReport } from './types';

/**
 * Pure (the delivery workflow imports it): an actions destination's mappings each deliver
 * as a lane of their own — own rounds, retries and holds — inside the one message workflow.
 */

/** A destination (the seed's: URLs in order) or one mapping of an actions destination. */
export interface Lane {
  destinationId: string;
  mapping?: string;
}

/** The workflow's key for a lane's state: a `webhooks` destination's is its id, as before mappings. */
export const laneKey = (lane: Lane) => (lane.mapping === undefined ? lane.destinationId : `${lane.destinationId}\u0000${lane.mapping}`);

/** How a reason names where an attempt went: `webhook 1`, or `mapping "Slack alert"`. */
export const whereInLane = (lane: Lane, webhookIndex: number) => (lane.mapping === undefined ? `webhook ${webhookIndex}` : `mapping ${JSON.stringify(lane.mapping)}`);

/** One line, at most `max` characters, with nothing that opens a link in the Web UI's markdown. */
const plain = (text: string, max: number) => {
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return (line.length > max ? `${line.slice(0, max - 1)}…` : line).replace(/[\\[\]<>]/g, (c) => `\\${c}`);
};

/** The Web UI's summary of a mapping's attempt: `mapping "Slack alert" of dst_… · round 2` (never its URL: a Slack URL is its secret). */
export function mappingAttemptSummary(mapping: string, round: number, destinationId: string): string {
  return `mapping "${plain(mapping, 64)}" of ${plain(destinationId, 200)}${round > 1 ? ` · round ${round}` : ''}`;
}

/**
 * The destination's report from its mappings' lanes: failed when any request failed (each reason
 * named by its mapping), delivered when every one was, else stopped.
 */
export function mappingsReport(destinationId: string, names: string[], lanes: DestinationReport[]): DestinationReport {
  const mappings: MappingReport[] = lanes.map((lane, i) => ({ name: names[i], status: lane.status, rounds: lane.rounds, ...(lane.reason !== undefined && { reason: lane.reason }) }));
  const rounds = Math.max(0, ...lanes.map((lane) => lane.rounds));
  const named = (status: MappingReport['status']) => mappings.filter((m) => m.status === status).map((m) => `mapping ${JSON.stringify(m.name)}: ${m.reason ?? status}`).join('; ');
  if (mappings.some((m) => m.status === 'failed')) return { destinationId, status: 'failed', rounds, reason: named('failed'), mappings };
  if (mappings.every((m) => m.status === 'delivered')) return { destinationId, status: 'delivered', rounds, mappings };
  return { destinationId, status: 'stopped', rounds, reason: named('stopped'), mappings };
}
