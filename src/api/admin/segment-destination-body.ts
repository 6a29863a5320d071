import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import { FUNCTION_METADATA_ID, metadataIdOf, readSegmentDestination, type FunctionLookup } from '../../segment/destination-shape';
import type { Store } from '../../store/types';
import { ApiError, badRequest } from '../errors';

/** Segment's destination fields: a body with one of these is read as Segment's shape. */
const SEGMENT_MARKERS = ['metadataId', 'metadata'];
/** Segment's own fields besides those the reading uses: accepted and ignored. */
const SEGMENT_IGNORED = ['id', 'sourceId', 'source_id', 'metadataId', 'metadata', 'settings', 'name', 'enabled', 'workspaceId'];

/** What a Segment-shaped create changed, answered beside the destination (`segmentChanges`). */
export const segmentChangesOf = (request: FastifyRequest): string[] | undefined => (request as FastifyRequest & { segmentChanges?: string[] }).segmentChanges;

/**
 * `POST /admin/sources/:sourceId/destinations` also takes Segment's destination shape
 * (`{sourceId, metadataId | metadata.id, name, enabled, settings}`, settings an object or
 * Terraform's JSON string): before the schema checks the body, it becomes the Switchyard body it
 * means (segment/destination-shape.ts). A catalog destination Switchyard cannot deliver to is a
 * 422 naming it; a secret Segment exported masked is a 400 asking for the secret itself. An
 * Actions destination's subscriptions come beside it as `mappings` (Switchyard keeps them on it).
 */
export const readSegmentDestinationBody =
  (functions: Pick<Store['functions'], 'get'>): preValidationHookHandler =>
  (request, _reply, done) => {
    const body = request.body as Record<string, unknown> | null;
    if (body === null || typeof body !== 'object' || !SEGMENT_MARKERS.some((key) => Object.hasOwn(body, key))) return done();
    // A destination function's metadata id is the hex of its `dfn_` id: looked up before the pure reading.
    const metadataId = metadataIdOf(body);
    if (metadataId === undefined || !FUNCTION_METADATA_ID.test(metadataId)) return readBody(request, undefined, done);
    functions.get(`dfn_${metadataId}`).then(
      (fn) => readBody(request, fn && fn.resourceType === 'DESTINATION' ? (id) => (id === metadataId ? { functionId: fn.id, displayName: fn.displayName } : undefined) : undefined, done),
      (err: Error) => done(err),
    );
  };

function readBody(request: FastifyRequest, lookup: FunctionLookup | undefined, done: (err?: Error) => void): void {
  const body = request.body as Record<string, unknown>;
  const { sourceId: pathSource } = request.params as { sourceId: string };
  for (const key of ['sourceId', 'source_id']) {
    const named = body[key];
    if (typeof named === 'string' && named.startsWith('src_') && named !== pathSource)
      return done(badRequest(`${key}: names source ${named}, not the one in the path (${pathSource}); leave it out, or give Segment's own id (it is ignored)`));
  }
  const read = readSegmentDestination(body, lookup);
  if (!read.ok) return done(read.status === 422 ? new ApiError(422, 'unsupported_destination', `${read.field}: ${read.rule}`) : badRequest(`${read.field}: ${read.rule}`));
  const { destination } = read;
  if (destination.maskedSecrets.length > 0) {
    return done(badRequest(`settings.${destination.maskedSecrets[0]}: is masked as Segment exports secrets (••••••••••abcd); give the secret itself, or leave it out`));
  }
  // Switchyard's own fields given beside Segment's (mappings, consent, …) are kept and checked as usual.
  const own = Object.fromEntries(Object.entries(body).filter(([key]) => !SEGMENT_IGNORED.includes(key)));
  request.body = { ...destination.body, ...own };
  if (destination.changes.length > 0) (request as FastifyRequest & { segmentChanges?: string[] }).segmentChanges = destination.changes;
  done();
}
