import { MESSAGE_TYPES, type CallType } from '../delivery/types';

export type IngestRoute = { path: string; kind: 'call'; type: CallType } | { path: string; kind: 'batch' };

/**
 * Every ingestion route, once. Segment's browser and mobile libraries post to the short forms:
 * `{apiHost}/{first letter of the type}` per call, `{apiHost}/b` for a batch (apiHost ends in /v1).
 */
export const INGEST_ROUTES: readonly IngestRoute[] = [
  ...MESSAGE_TYPES.flatMap((type) => [`/v1/${type}`, `/v1/${type[0]}`].map((path): IngestRoute => ({ path, kind: 'call', type }))),
  ...['/v1/batch', '/v1/b', '/v1/import'].map((path): IngestRoute => ({ path, kind: 'batch' })),
];
