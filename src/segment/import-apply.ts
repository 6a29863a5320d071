import type { Store } from '../store/types';
import { functionMetadataIdOf } from './destination-shape';
import type { ImportObject, ImportPlan, PlannedWrite } from './import-plan';

/**
 * `--apply`: the plan's writes made through Switchyard's own admin API (so every rule, secret
 * handling and audit row of a hand-made change applies), in order, each matched by its Segment id
 * against what an earlier import made. An object whose definition is the same as last time is kept
 * as it is: applying an export twice writes nothing the second time.
 */
export interface AdminCalls {
  /** One admin API call as the importing token; `json` the answer. */
  call(method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }>;
}

export interface ApplyDeps {
  admin: AdminCalls;
  imports: Store['segmentImports'];
  /** Records the Segment id on a source it made (GET /admin/sources shows it). */
  setSourceSegmentId(sourceId: string, segmentId: string): Promise<void>;
}

const ok = (status: number) => status >= 200 && status < 300;

/** Where an object made earlier is read, to see it still exists before keeping it. */
function objectUrl(write: PlannedWrite, id: string, ids: Ids): string | undefined {
  switch (write.kind) {
    case 'source':
      return `/admin/sources/${id}`;
    case 'tracking_plan':
      return `/admin/tracking-plans/${id}`;
    case 'destination':
      return `/admin/destinations/${id}`;
    case 'filter': {
      const destination = ids.get(`destination:${write.destinationSegmentId}`);
      return destination ? `/admin/destinations/${destination}/filters/${id}` : undefined;
    }
    case 'transformation':
      return `/admin/transformations/${id}`;
    case 'function':
      return `/admin/functions/${id}`;
    case 'insert_function_instance':
      return `/admin/insert-function-instances/${id}`;
    case 'plan_connection':
      return undefined;
  }
}

type Ids = Map<string, string>;

function fail(object: ImportObject, reason: string): void {
  Object.assign(object, { outcome: 'cannot', reason, applied: 'failed' });
  delete object.id;
}

export async function applyImport(plan: ImportPlan, deps: ApplyDeps): Promise<void> {
  const ids: Ids = new Map();
  const { admin } = deps;
  for (const { write, object, fingerprint } of plan.writes) {
    const earlier = await deps.imports.find(write.kind, write.segmentId);
    let existing = earlier?.switchyardId;
    const url = existing ? objectUrl(write, existing, ids) : undefined;
    if (existing && url && (await admin.call('GET', url)).status === 404) existing = undefined;
    if (existing && earlier?.fingerprint === fingerprint) {
      ids.set(`${write.kind}:${write.segmentId}`, existing);
      Object.assign(object, { id: existing, applied: 'kept' });
      continue;
    }
    const done = await writeOne(write, existing, ids, admin);
    if ('reason' in done) {
      fail(object, done.reason);
      continue;
    }
    if (write.kind === 'source') await deps.setSourceSegmentId(done.id, write.segmentId);
    await deps.imports.record(write.kind, write.segmentId, done.id, fingerprint);
    ids.set(`${write.kind}:${write.segmentId}`, done.id);
    Object.assign(object, { id: done.id, applied: existing ? 'updated' : 'created' });
  }
}

const reasonOf = (answer: { status: number; json: Record<string, unknown> }) => {
  const said = [answer.json.message, answer.json.code].find((v): v is string => typeof v === 'string');
  return `Switchyard refused it (${answer.status}): ${said ?? 'no reason given'}`;
};

async function writeOne(write: PlannedWrite, existing: string | undefined, ids: Ids, admin: AdminCalls): Promise<{ id: string } | { reason: string }> {
  switch (write.kind) {
    case 'source': {
      const answer = existing ? await admin.call('PATCH', `/admin/sources/${existing}`, write.body) : await admin.call('POST', '/admin/sources', write.body);
      return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
    }
    case 'tracking_plan': {
      if (!existing) {
        const answer = await admin.call('POST', '/admin/tracking-plans', write.body);
        return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
      }
      const { rules, ...plan } = write.body;
      const changed = await admin.call('PATCH', `/admin/tracking-plans/${existing}`, plan);
      if (!ok(changed.status)) return { reason: reasonOf(changed) };
      const replaced = await admin.call('PUT', `/admin/tracking-plans/${existing}/rules`, { rules });
      return ok(replaced.status) ? { id: existing } : { reason: reasonOf(replaced) };
    }
    case 'function': {
      if (!existing) {
        const answer = await admin.call('POST', '/admin/functions', write.body);
        return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
      }
      const changed = await admin.call('PATCH', `/admin/functions/${existing}`, write.body);
      if (!ok(changed.status)) return { reason: reasonOf(changed) };
      // A save adds a version and leaves the deployed one running; the export is what Segment runs, so it is deployed.
      const deployed = await admin.call('POST', `/admin/functions/${existing}/deploy`);
      return ok(deployed.status) ? { id: existing } : { reason: reasonOf(deployed) };
    }
    case 'destination': {
      const sourceId = ids.get(`source:${write.sourceSegmentId}`);
      if (!sourceId) return { reason: `its source ${write.sourceSegmentId} did not move` };
      let body = write.body;
      if (write.functionSegmentId) {
        const functionId = ids.get(`function:${write.functionSegmentId}`);
        if (!functionId) return { reason: `its function ${write.functionSegmentId} did not move` };
        body = { ...body, functionId };
      }
      if (existing) {
        // Its kind and its function (matched by Segment id, so the same one) do not change.
        const { type: _fixed, functionId: _same, ...patch } = body;
        const answer = await admin.call('PATCH', `/admin/destinations/${existing}`, patch);
        return ok(answer.status) ? { id: existing } : { reason: reasonOf(answer) };
      }
      const answer = await admin.call('POST', `/admin/sources/${sourceId}/destinations`, body);
      return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
    }
    case 'filter': {
      const destinationId = ids.get(`destination:${write.destinationSegmentId}`);
      if (!destinationId) return { reason: `its destination ${write.destinationSegmentId} did not move` };
      const answer = existing ? await admin.call('PATCH', `/admin/destinations/${destinationId}/filters/${existing}`, write.body) : await admin.call('POST', `/admin/destinations/${destinationId}/filters`, write.body);
      return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
    }
    case 'insert_function_instance': {
      const functionId = ids.get(`function:${write.functionSegmentId}`);
      if (!functionId) return { reason: `its function ${write.functionSegmentId} did not move` };
      const integrationId = ids.get(`destination:${write.destinationSegmentId}`);
      if (!integrationId) return { reason: `its destination ${write.destinationSegmentId} did not move` };
      // Its function and destination (matched by Segment id, so the same ones) do not change.
      const answer = existing ? await admin.call('PATCH', `/admin/insert-function-instances/${existing}`, write.body) : await admin.call('POST', '/admin/insert-function-instances', { functionId, integrationId, ...write.body });
      return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
    }
    case 'transformation': {
      const sourceId = ids.get(`source:${write.sourceSegmentId}`);
      if (!sourceId) return { reason: `its source ${write.sourceSegmentId} did not move` };
      const body: Record<string, unknown> = { ...write.body, sourceId };
      if (write.functionSegmentId) {
        const functionId = ids.get(`function:${write.functionSegmentId}`);
        if (!functionId) return { reason: `its destination function ${write.functionSegmentId} did not move` };
        body.destinationMetadataId = functionMetadataIdOf(functionId);
      }
      const answer = existing ? await admin.call('PATCH', `/admin/transformations/${existing}`, body) : await admin.call('POST', '/admin/transformations', body);
      return ok(answer.status) ? { id: String(answer.json.id) } : { reason: reasonOf(answer) };
    }
    case 'plan_connection': {
      const planId = ids.get(`tracking_plan:${write.planSegmentId}`);
      const sourceId = ids.get(`source:${write.sourceSegmentId}`);
      if (!planId || !sourceId) return { reason: 'its source or its plan did not move' };
      const answer = await admin.call('POST', `/admin/tracking-plans/${planId}/sources`, { sourceId });
      return ok(answer.status) ? { id: `${planId}:${sourceId}` } : { reason: reasonOf(answer) };
    }
  }
}
