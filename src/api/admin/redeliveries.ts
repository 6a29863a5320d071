import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { REDELIVERY_JOB_ID_PATTERN, type RedeliveryStatusFilter } from '../../delivery/redelivery-job';
import type { Deliveries } from '../../ports';
import type { Store } from '../../store/types';
import { badRequest, notFound } from '../errors';
import { errorReplies } from './schemas';
import { recordChange } from '../access/audit-trail';

/**
 * Bulk redelivery: every delivery of a source that failed (or was stopped) in a time
 * range, delivered again by a Temporal workflow (workflows/redeliver-matching.ts), and its progress.
 */

const security = [{ adminToken: [] }];

const StatusFilter = Type.Unsafe<RedeliveryStatusFilter>({ type: 'string', enum: ['failed', 'stopped'], description: 'Which ended deliveries to send again: failed or stopped.' });

const Filter = Type.Object(
  {
    status: StatusFilter,
    since: Type.String({ format: 'date-time', description: 'Deliveries started at or after this time.' }),
    until: Type.String({ format: 'date-time', description: 'Deliveries started before this time.' }),
    destinationId: Type.Optional(
      Type.String({ pattern: '^dst_[0-9a-f]{32}$', description: "One of the source's destinations: only its deliveries, and only to it." }),
    ),
  },
  { additionalProperties: false },
);

const JobView = Type.Object({
  id: Type.String(),
  status: Type.Unsafe<'running' | 'completed' | 'failed'>({ type: 'string', enum: ['running', 'completed', 'failed'] }),
  matched: Type.Integer({ description: 'Ended deliveries matching the filter that the job has read (all of them once completed).' }),
  started: Type.Integer({ description: 'Redeliveries the job started: one per message at most.' }),
  finished: Type.Integer({ description: 'Of those, the ones whose new run has ended (delivered or not), as the job last checked.' }),
  skipped: Type.Integer({ description: 'Matched but not sent again: the message has a newer run, or no destination is left to send to.' }),
  error: Type.Optional(Type.String()),
  sourceId: Type.String(),
  filter: Filter,
  createdAt: Type.String({ format: 'date-time', description: 'The job matches deliveries that had ended by this time.' }),
});

export const redeliveryRoutes: FastifyPluginAsyncTypebox<{ store: Store; deliveries: Deliveries }> = async (app, { store, deliveries }) => {
  app.post(
    '/sources/:sourceId/redeliver',
    {
      schema: {
        security,
        params: Type.Object({ sourceId: Type.String({ minLength: 1, maxLength: 100 }) }),
        body: Filter,
        response: { 202: Type.Object({ id: Type.String() }), ...errorReplies },
      },
    },
    async (request, reply) => {
      const { sourceId } = request.params;
      const filter = request.body;
      if (Date.parse(filter.since) >= Date.parse(filter.until)) throw badRequest('until: must be later than since');
      if (!(await store.sources.get(sourceId))) throw notFound(`source ${sourceId}`);
      if (filter.destinationId !== undefined) {
        const destination = await store.destinations.get(filter.destinationId);
        if (destination?.sourceId !== sourceId) throw badRequest(`destinationId: is not a destination of source ${sourceId}`);
      }
      const job = await deliveries.startRedeliveryJob(sourceId, filter);
      await recordChange(store, request, job.id);
      return reply.code(202).send(job);
    },
  );

  app.get(
    '/redeliveries/:id',
    { schema: { security, params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }), response: { 200: JobView, ...errorReplies } } },
    async (request) => {
      const { id } = request.params;
      // Any other shape was never a job id: unknown, like a well-formed id Temporal does not have.
      const job = new RegExp(REDELIVERY_JOB_ID_PATTERN).test(id) ? await deliveries.redeliveryJob(id) : undefined;
      if (!job) throw notFound(`redelivery job ${id}`);
      return job;
    },
  );
};
