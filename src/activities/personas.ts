import { Context, log } from '@temporalio/activity';
import { deliveryPolicy, type Config } from '../config';
import { inParallel } from '../in-parallel';
import { isAboutSuppressed } from '../delivery/suppression';
import { destinationRulesReader } from '../messages/destination-rules';
import { deliveryPlanner, outgoing } from '../messages/plan-deliveries';
import { suppressedUsers } from '../messages/suppressed-users';
import { bodySealer } from '../messages/seal-bodies';
import { toPersonasIdentify } from '../personas/messages';
import { positionCursor, readSyncCursor } from '../personas/sync-cursor';
import type { ComputationRef } from '../personas/types';
import type { StartDelivery, SyncSchedules } from '../ports';
import type { Keyring } from '../privacy/keyring';
import type { Store } from '../store/types';

/** Delivery starts in flight at once from one page: bounded fan-out against the Temporal frontend. */
const START_CONCURRENCY = 32;

/** Sync messages get this worker's delivery policy: the same env vars the API uses for ingested calls. */
export type PersonasConfig = Pick<Config, 'personasDeliveryTaskQueue' | 'personasSyncPageSize'> & Parameters<typeof deliveryPolicy>[0];

export type PrepareResult = { status: 'gone' | 'no_destinations' } | { status: 'ready'; version: number; changes: number; reused: boolean };

export interface PageRequest {
  computation: ComputationRef;
  version: number;
  /** Where this page begins (personas/sync-cursor.ts): a position, or in older histories a profile id. */
  after?: string;
}

export type PageResult = { status: 'gone' | 'superseded' | 'no_destinations' } | { status: 'started'; started: number; existing: number; next?: string };

/**
 * The I/O of a Personas sync. Each step can be repeated without effect beyond the first run: the
 * changes of a version are frozen in the store, message ids are derived from them, and Temporal
 * refuses a second delivery workflow with the same id.
 */
export function makePersonasActivities(store: Store, config: PersonasConfig, temporal: { startDelivery: StartDelivery; schedules: Pick<SyncSchedules, 'delete'>; keyring: Keyring | undefined }) {
  // The same decision as ingested calls: each destination's consent, today's suppression
  // and its filters. Not counted in the overview, whose `received` counts ingested calls.
  const rulesOf = destinationRulesReader(
    store.destinationFilters,
    (message, filterId) => {
      log.warn(message, { filterId });
    },
    store.transformations,
  );
  const planDeliveries = deliveryPlanner(store.destinations, deliveryPolicy(config), temporal.keyring && bodySealer(store.dataKeys, temporal.keyring), { rulesOf });

  return {
    /** Freezes the changes of the next snapshot version, or returns the pending one an earlier run left. */
    async preparePersonasSync(computation: ComputationRef): Promise<PrepareResult> {
      const definition = computation.kind === 'audience' ? await store.personas.audiences.get(computation.id) : await store.personas.computedTraits.get(computation.id);
      if (!definition) return { status: 'gone' };
      // Nothing can be delivered: keep the snapshot as it is, so the first sync after a destination
      // is switched on still sends every member (seed, Personas rule 3).
      if ((await store.destinations.listEnabledIds(definition.sourceId)).length === 0) return { status: 'no_destinations' };
      const prepared = await store.personas.sync.prepare(computation, Date.now());
      if (prepared.status === 'gone') return prepared;
      log.info('personas sync prepared', { computationId: computation.id, version: prepared.version, changes: prepared.changes, reused: prepared.reused });
      return { status: 'ready', version: prepared.version, changes: prepared.changes, reused: prepared.reused };
    },

    /** One page of changes → one identify delivery workflow each, through the normal delivery path. */
    async startPersonasDeliveries(request: PageRequest): Promise<PageResult> {
      const { computation, version } = request;
      // One row more than a page: whether it is there says if another page follows.
      const from = readSyncCursor(request.after);
      const page = await store.personas.sync.changes(computation, version, from, config.personasSyncPageSize + 1);
      if (page.status !== 'pending') return { status: page.status };
      const changes = page.changes.slice(0, config.personasSyncPageSize);
      const synced = { kind: computation.kind, id: computation.id, key: page.key, version, computedAt: page.computedAt };
      const messages = changes.map((change) => toPersonasIdentify(temporal.keyring, synced, change));
      const suppressed = await suppressedUsers(store.suppressions, messages);
      const plan = await planDeliveries(
        page.sourceId,
        messages.map((message) => outgoing(message, { suppressed: isAboutSuppressed(message, suppressed) })),
      );
      if (plan.status === 'no_destinations') return { status: 'no_destinations' };
      let started = 0;
      let existing = 0;
      await inParallel(plan.inputs, START_CONCURRENCY, async (input) => {
        // Their own task queue: a large sync neither delays ingested calls' deliveries nor waits behind its own.
        if (await temporal.startDelivery(input, config.personasDeliveryTaskQueue)) started++;
        else existing++;
        Context.current().heartbeat(started + existing);
      });
      const more = page.changes.length > changes.length;
      // A sync paging by profile id (a history from before positions) finishes the same way.
      const next = 'afterProfileId' in from ? changes.at(-1)!.profileId : positionCursor(('position' in from ? from.position : 0) + changes.length);
      return { status: 'started', started, existing, ...(more ? { next } : {}) };
    },

    /** The changes become the snapshot: the next sync sends only what differs from them. */
    async commitPersonasSync(request: { computation: ComputationRef; version: number }) {
      return store.personas.sync.commit(request.computation, request.version);
    },

    /** A schedule whose audience or computed trait is gone (e.g. its source was deleted) removes itself. */
    async retirePersonasSchedule(computation: ComputationRef): Promise<void> {
      await temporal.schedules.delete(computation);
      log.info('personas schedule of a deleted definition removed', { computationId: computation.id });
    },
  };
}
