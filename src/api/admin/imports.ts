import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Store } from '../../store/types';
import { functionCodeRefusals } from '../../segment/function-checks';
import { applyImport } from '../../segment/import-apply';
import { countsByKind, MIGRATING_DOC, planImport } from '../../segment/import-plan';
import { readExport } from '../../segment/read-export';
import { recordChange } from '../access/audit-trail';
import { errorReplies } from './schemas';

/** An export of a few hundred resources is far below this; the limit keeps one request bounded. */
const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
const MAX_FILES = 5_000;

const ImportBody = Type.Object(
  {
    files: Type.Record(Type.String({ minLength: 1, maxLength: 500 }), Type.String({ maxLength: 5 * 1024 * 1024 }), {
      maxProperties: MAX_FILES,
      description: 'The export, by relative path: Terraform provider files (`.tf`) or Segment Public API answers (`.json`).',
    }),
    apply: Type.Optional(Type.Boolean({ description: 'false (default): a dry run, nothing written. true: create or update what the report says can move.' })),
    secrets: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4096 })), {
        description: 'Values Segment exported masked, and write keys to keep: `{"<segment id>": {"sharedSecret": "…", "writeKey": "…"}}`. Used for the objects they name; never stored apart from them, never answered.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Outcome = Type.Union([Type.Literal('unchanged'), Type.Literal('changed'), Type.Literal('cannot')]);
const ImportView = Type.Object({
  objects: Type.Array(
    Type.Object({
      kind: Type.String(),
      segmentId: Type.String(),
      name: Type.String(),
      outcome: Outcome,
      changes: Type.Optional(Type.Array(Type.String())),
      reason: Type.Optional(Type.String()),
      id: Type.Optional(Type.String()),
      warnings: Type.Optional(Type.Array(Type.String())),
      secretsNeeded: Type.Optional(Type.Array(Type.String())),
      applied: Type.Optional(Type.String()),
    }),
  ),
  counts: Type.Record(Type.String(), Type.Object({ unchanged: Type.Integer(), changed: Type.Integer(), cannot: Type.Integer() })),
  problems: Type.Array(Type.Object({ file: Type.String(), problem: Type.String() })),
  applied: Type.Boolean(),
  guide: Type.String({ description: 'The page that says, for every kind of Segment object, where it goes or what to use instead.' }),
});

/**
 * `POST /admin/imports`: a Segment workspace export in, the report out (src/segment/*): one line per
 * object, moved unchanged, moved with each change named, or cannot move with why and what instead.
 * A dry run unless `apply`; applying writes through the admin API as the calling token.
 */
export const importRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.post('/imports', { bodyLimit: MAX_IMPORT_BYTES, schema: { body: ImportBody, response: { 200: ImportView, ...errorReplies } } }, async (request) => {
    const read = await readExport(request.body.files);
    const plan = planImport(read.resources, request.body.secrets ?? {}, await functionCodeRefusals(read.resources));
    const apply = request.body.apply === true;
    if (apply) {
      const authorization = request.headers.authorization ?? '';
      await applyImport(plan, {
        admin: {
          async call(method, url, body) {
            const answer = await app.inject({ method, url, headers: { authorization, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { payload: JSON.stringify(body) }) });
            const text = answer.body;
            let json: Record<string, unknown> = {};
            try {
              json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
            } catch {
              json = { message: text.slice(0, 200) };
            }
            return { status: answer.statusCode, json };
          },
        },
        imports: store.segmentImports,
        setSourceSegmentId: async (sourceId, segmentId) => void (await store.sources.update(sourceId, { segmentId })),
      });
      await recordChange(store, request, 'segment-import', ['files', ...(request.body.secrets ? ['secrets'] : [])]);
    } else {
      // A dry run still says what an earlier import made of each object.
      for (const { write, object } of plan.writes) {
        const earlier = await store.segmentImports.find(write.kind, write.segmentId);
        if (earlier) object.id = earlier.switchyardId;
      }
    }
    return { objects: plan.objects, counts: countsByKind(plan.objects), problems: read.problems, applied: apply, guide: MIGRATING_DOC };
  });
};
