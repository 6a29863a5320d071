import type { RuleViolation } from '../delivery/webhook-rules';

/**
 * A filter exported from Segment (DestinationFilterV1) carries `id`, `sourceId`,
 * `destinationId`, `createdAt` and `updatedAt`. They are Segment's, so they are ignored, with one
 * exception: an id in Switchyard's own form (`src_…`, `dst_…`, `flt_…`; Segment's ids never take
 * it) that names another record than the route is a mistake worth a 400, not a silent move.
 */
export interface PastedFilterIds {
  id?: string;
  sourceId?: string;
  destinationId?: string;
}

const OURS = { sourceId: /^src_/, destinationId: /^dst_/, id: /^flt_/ } as const;

export function pastedFilterViolation(pasted: PastedFilterIds, route: { destinationId: string; sourceId: string; filterId?: string }): RuleViolation | undefined {
  if (pasted.destinationId !== undefined && OURS.destinationId.test(pasted.destinationId) && pasted.destinationId !== route.destinationId) {
    return { field: 'destinationId', rule: `names destination ${pasted.destinationId}, not this one (${route.destinationId}); leave it out, or give Segment's own id (it is ignored)` };
  }
  if (pasted.sourceId !== undefined && OURS.sourceId.test(pasted.sourceId) && pasted.sourceId !== route.sourceId) {
    return { field: 'sourceId', rule: `names source ${pasted.sourceId}, not this destination's (${route.sourceId}); leave it out, or give Segment's own id (it is ignored)` };
  }
  // A POST makes a new filter: any id it carries is of the copy it was taken from.
  if (route.filterId !== undefined && pasted.id !== undefined && OURS.id.test(pasted.id) && pasted.id !== route.filterId) {
    return { field: 'id', rule: `names filter ${pasted.id}, not the one in the path (${route.filterId})` };
  }
  return undefined;
}
