import { createHash } from 'node:crypto';
import type { SegmentResource } from './read-export';
import { isMaskedSecret, metadataIdOf, readSegmentDestination, SWITCHYARD_CATALOG_IDS } from './destination-shape';
import { compileTransformation, type TransformationRules } from '../rules/transformations';
import { SEGMENT_INTERNAL_SETTINGS } from '../mappings/segment-subscription';
import { fromDraft04, keyWarning } from '../api/admin/tracking-plan-shape';
import { FUNCTION_KINDS } from '../functions/handlers';

/**
 * What a Segment workspace import decides for each resource, before anything is written: where it
 * goes in Switchyard and with which changes, or why it cannot go and what to use instead. Pure (no
 * store, no clock): a dry run is exactly this; `--apply` then writes what it says (import-apply.ts).
 */

export type ImportKind = 'source' | 'destination' | 'subscription' | 'filter' | 'tracking_plan' | 'plan_connection' | 'transformation' | 'function' | 'insert_function_instance' | 'label' | 'user' | 'warehouse' | 'reverse_etl' | 'unknown';
export type Outcome = 'unchanged' | 'changed' | 'cannot';

/** One line of the report: the issue's shape, plus what applying did. */
export interface ImportObject {
  kind: ImportKind;
  segmentId: string;
  name: string;
  outcome: Outcome;
  changes?: string[];
  reason?: string;
  /** Switchyard's id once applied (or found from an earlier import). */
  id?: string;
  /** Kept as given but probably not meant (a plan rule key with white space around it). */
  warnings?: string[];
  /** Secrets Segment exported masked, by the name `--secrets` gives them under (`<segmentId>.<setting>`). */
  secretsNeeded?: string[];
  /** With apply: `created`, `updated`, `kept` (an earlier import of the same definition: nothing written) or `failed`. */
  applied?: 'created' | 'updated' | 'kept' | 'failed';
}

/** Where the newcomer's page is; every `cannot` points at it. */
export const MIGRATING_DOC = 'docs/migrating-from-segment.md';

/** Supplied secrets: `{"<segmentId>": {"<setting>": "<value>"}}` (a source's write key as `writeKey`). */
export type ImportSecrets = Record<string, Record<string, string>>;

/** A resource the import can write, with what it needs. */
export type PlannedWrite =
  | { kind: 'source'; segmentId: string; body: { name: string; slug?: string; labels?: Array<{ key: string; value: string; description?: string }>; writeKey?: string } }
  | { kind: 'tracking_plan'; segmentId: string; body: { name: string; description?: string; type?: string; rules: unknown[] } }
  | { kind: 'function'; segmentId: string; body: Record<string, unknown> }
  /** A function destination names its function by Segment id (`functionSegmentId`): its Switchyard id is known once that function is written. */
  | { kind: 'destination'; segmentId: string; sourceSegmentId: string; body: Record<string, unknown>; functionSegmentId?: string }
  | { kind: 'filter'; segmentId: string; destinationSegmentId: string; body: Record<string, unknown> }
  /** Its function and destination named by Segment id: their Switchyard ids are known once they are written. */
  | { kind: 'insert_function_instance'; segmentId: string; functionSegmentId: string; destinationSegmentId: string; body: { name?: string; enabled: boolean; settings: Record<string, unknown> } }
  /** One scoped to a destination function names it by Segment id (`functionSegmentId`): its metadata id is the Switchyard function's. */
  | { kind: 'transformation'; segmentId: string; sourceSegmentId: string; body: Record<string, unknown>; functionSegmentId?: string }
  | { kind: 'plan_connection'; segmentId: string; planSegmentId: string; sourceSegmentId: string };

export interface ImportPlan {
  objects: ImportObject[];
  /** In the order they must be written (sources, plans, functions, destinations with their subscriptions, filters, insert function instances, transformations, connections). */
  writes: Array<{ write: PlannedWrite; object: ImportObject; fingerprint: string }>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** What cannot move, the kind it is reported as, and what to use instead. */
const CANNOT: Record<string, { kind: ImportKind; reason: string }> = {
  segment_user: { kind: 'user', reason: `Switchyard has no user accounts: make an admin token per person or team with the scopes they need (POST /admin/tokens; ${MIGRATING_DOC})` },
  segment_user_group: { kind: 'user', reason: `Switchyard has no user groups: make an admin token per team with the scopes it needs (POST /admin/tokens; ${MIGRATING_DOC})` },
  segment_warehouse: { kind: 'warehouse', reason: `Switchyard delivers to webhooks, not warehouses: load a warehouse from a webhook receiver of your own (${MIGRATING_DOC})` },
  segment_source_warehouse_connection: { kind: 'warehouse', reason: `Switchyard delivers to webhooks, not warehouses (${MIGRATING_DOC})` },
  segment_profiles_warehouse: { kind: 'warehouse', reason: `Switchyard's Personas keep profiles in its own store; there is no profiles warehouse (${MIGRATING_DOC})` },
  segment_reverse_etl_model: { kind: 'reverse_etl', reason: `Switchyard has no Reverse ETL: send the rows as track or identify calls to a source (${MIGRATING_DOC})` },
};

/**
 * A hash of what a resource says (and which secrets were given for it, never their values): an
 * import of the same definition writes nothing. A secret changed since is set with PATCH.
 */
function fingerprint(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

function nameOf(resource: SegmentResource): string {
  const a = resource.attributes;
  return str(a.name) ?? str(a.display_name) ?? str(a.displayName) ?? str(a.title) ?? str(a.slug) ?? str(a.key) ?? resource.segmentId;
}

/** The subscription id of a compound Terraform import id (`<destination>:<subscription>`). */
const destinationOfSubscription = (resource: SegmentResource) =>
  str(resource.attributes.destination_id) ?? str(resource.attributes.destinationId) ?? (resource.segmentId.includes(':') ? resource.segmentId.split(':')[0] : undefined);

/** A subscription as Switchyard's mapping, or why it cannot be one. */
function subscriptionMapping(resource: SegmentResource): { mapping: Record<string, unknown>; changes: string[] } | { reason: string } {
  const a = resource.attributes;
  const settings = isObject(a.settings) ? a.settings : {};
  for (const [key, rule] of Object.entries(SEGMENT_INTERNAL_SETTINGS)) if (settings[key] !== undefined) return { reason: `settings.${key} ${rule}` };
  if (settings.enable_batching === true)
    return { reason: `settings.enable_batching: Segment sends batches; Switchyard sends every matched event as its own request (set enable_batching to false to move it) (${MIGRATING_DOC})` };
  if (str(a.model_id) || str(a.modelId)) return { reason: `it maps a Reverse ETL model; Switchyard has no Reverse ETL (${MIGRATING_DOC})` };
  const { enable_batching: _b, batch_size: _s, batch_keys: _k, ...kept } = settings;
  return {
    mapping: { name: nameOf(resource).slice(0, 100), enabled: a.enabled === true, trigger: str(a.trigger) ?? 'all', settings: kept },
    changes: [],
  };
}

/** A Terraform or Public API destination filter in the shape POST /admin/destinations/:id/filters takes. */
function filterBody(a: Record<string, unknown>): Record<string, unknown> {
  const actions = (Array.isArray(a.actions) ? (a.actions as unknown[]) : []).map((action): unknown => {
    if (!isObject(action)) return action;
    return Object.fromEntries(Object.entries(action).filter(([, v]) => v !== null && v !== undefined));
  });
  const body: Record<string, unknown> = { if: a.if, actions, enabled: a.enabled === true };
  if (typeof a.title === 'string') body.title = a.title;
  if (typeof a.description === 'string') body.description = a.description;
  return body;
}

/** A Terraform or Public API transformation in the Public API shape POST /admin/transformations takes (its sourceId set when applied); nulls and empty lists left out. */
function transformationBody(a: Record<string, unknown>): Record<string, unknown> {
  const pick = (camel: string, snake: string) => a[camel] ?? a[snake];
  const items = (value: unknown, names: Record<string, string>) =>
    Array.isArray(value) ? value.filter(isObject).map((item) => Object.fromEntries(Object.entries(item).map(([key, v]) => [names[key] ?? key, v]))) : undefined;
  const body: Record<string, unknown> = {
    enabled: a.enabled === true,
    if: pick('if', 'if'),
    destinationMetadataId: pick('destinationMetadataId', 'destination_metadata_id'),
    newEventName: pick('newEventName', 'new_event_name'),
    drop: a.drop,
    propertyRenames: items(pick('propertyRenames', 'property_renames'), { old_name: 'oldName', new_name: 'newName' }),
    propertyValueTransformations: items(pick('propertyValueTransformations', 'property_value_transformations'), { property_paths: 'propertyPaths', property_value: 'propertyValue' }),
    fqlDefinedProperties: items(pick('fqlDefinedProperties', 'fql_defined_properties'), { property_name: 'propertyName' }),
    allowProperties: pick('allowProperties', 'allow_properties'),
  };
  const kept = Object.entries(body).filter(([key, v]) => key === 'enabled' || (v !== null && v !== undefined && !(key === 'drop' && v === false) && !(Array.isArray(v) && v.length === 0)));
  return Object.fromEntries(kept);
}

/** A tracking plan's rules: Terraform's `json_schema` strings and Public API objects alike (the route reads both). */
function planRules(a: Record<string, unknown>): { rules: unknown[]; changes: string[]; warnings: string[] } {
  const rules = Array.isArray(a.rules) ? a.rules : [];
  const changes: string[] = [];
  const warnings: string[] = [];
  for (const [i, rule] of rules.entries()) {
    if (!isObject(rule)) continue;
    const warning = keyWarning(str(rule.key), `rules[${i}]`);
    if (warning) warnings.push(warning);
    const raw = rule.json_schema ?? rule.jsonSchema;
    let schema: unknown = raw;
    if (typeof raw === 'string') {
      try {
        schema = JSON.parse(raw);
      } catch {
        schema = undefined;
      }
    }
    if (isObject(schema) && fromDraft04(schema) !== schema) changes.push(`rules[${i}].json_schema: a draft-04 schema, read in draft-07 words with the same meaning (id → $id, boolean exclusive bounds as numbers)`);
  }
  return { rules, changes, warnings };
}

/** Terraform's `segment_function` attributes (or the Public API's) in the body POST /admin/functions takes; Segment's other fields left out. */
function functionBody(a: Record<string, unknown>, kind: string): Record<string, unknown> {
  const pick = (camel: string, snake: string) => a[camel] ?? a[snake];
  const settings = Array.isArray(a.settings)
    ? a.settings.filter(isObject).map((s) => Object.fromEntries(['name', 'label', 'description', 'type', 'required', 'sensitive'].filter((key) => s[key] !== undefined && s[key] !== null).map((key) => [key, s[key]])))
    : undefined;
  const body: Record<string, unknown> = { resourceType: kind, code: a.code, displayName: pick('displayName', 'display_name'), description: a.description, logoUrl: pick('logoUrl', 'logo_url'), settings };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null && v !== undefined));
}

/** A function's catalog id as a destination names it: the hex after `dfn_` (or the id as it is). */
const functionMetadataId = (segmentId: string) => segmentId.replace(/^[a-z]+_/, '');

/** What moves with a function but is not run the way Segment runs it, by kind. */
const FUNCTION_CHANGES: Record<string, string> = {
  SOURCE: `resource_type SOURCE: the function moves, but its source attachment does not: a Switchyard source takes the calls sent with its write key and cannot run a source function in this version; send those calls from the function's webhook sender yourself, or keep the source function on Segment (${MIGRATING_DOC})`,
};

/**
 * `codeRefusals`: by Segment id, why a function's code fails the checks POST /admin/functions makes
 * (read before planning, by src/segment/function-checks.ts), so a dry run says what applying would.
 */
export function planImport(resources: SegmentResource[], secrets: ImportSecrets = {}, codeRefusals: Record<string, string> = {}): ImportPlan {
  const objects: ImportObject[] = [];
  const writes: ImportPlan['writes'] = [];
  const byType = (type: string) => resources.filter((r) => r.type === type);
  const sourceIds = new Set(byType('segment_source').map((r) => r.segmentId));
  const planIds = new Set(byType('segment_tracking_plan').map((r) => r.segmentId));
  const report = (object: ImportObject) => (objects.push(object), object);

  for (const resource of byType('segment_source')) {
    const a = resource.attributes;
    const changes: string[] = [];
    const name = nameOf(resource);
    const labels = Array.isArray(a.labels)
      ? a.labels
          .filter(isObject)
          .map((l) => ({
            key: typeof l.key === 'string' ? l.key : JSON.stringify(l.key),
            value: typeof l.value === 'string' ? l.value : '',
            ...(typeof l.description === 'string' && l.description && { description: l.description }),
          }))
      : [];
    const body: Extract<PlannedWrite, { kind: 'source' }>['body'] = { name: name.slice(0, 200), labels };
    const slug = str(a.slug);
    if (slug && /^[a-z0-9_-]+$/.test(slug)) body.slug = slug.slice(0, 200);
    else if (slug) changes.push(`slug: "${slug.slice(0, 200)}" is not kept: a Switchyard slug is lower-case letters, digits, _ and - (set one with PATCH /admin/sources/:id)`);
    const writeKey = secrets[resource.segmentId]?.writeKey ?? (Array.isArray(a.writeKeys) ? str(a.writeKeys[0]) : undefined);
    if (writeKey) body.writeKey = writeKey;
    else changes.push('writeKey: not in the export, so a new write key is made and every client must change it; give the Segment write key in --secrets (`{"<source id>": {"writeKey": "…"}}`) to keep it');
    const settings = isObject(a.settings) ? a.settings : {};
    if (Object.keys(settings).length > 0) changes.push(`settings: not used by Switchyard (${Object.keys(settings).join(', ')}): a Switchyard source takes every call sent with its key`);
    if (a.enabled === false) changes.push('enabled: false is not kept: a Switchyard source always takes the calls sent with its key (give the destinations enabled: false instead)');
    const object = report({ kind: 'source', segmentId: resource.segmentId, name, outcome: changes.length > 0 ? 'changed' : 'unchanged', ...(changes.length > 0 && { changes }) });
    writes.push({ write: { kind: 'source', segmentId: resource.segmentId, body }, object, fingerprint: fingerprint([resource.attributes, writeKey !== undefined]) });
  }

  for (const resource of byType('segment_tracking_plan')) {
    const a = resource.attributes;
    const { rules, changes, warnings } = planRules(a);
    const name = nameOf(resource);
    const object = report({
      kind: 'tracking_plan',
      segmentId: resource.segmentId,
      name,
      outcome: changes.length > 0 ? 'changed' : 'unchanged',
      ...(changes.length > 0 && { changes }),
      ...(warnings.length > 0 && { warnings }),
    });
    const body = { name: name.slice(0, 200), ...(typeof a.description === 'string' && { description: a.description }), ...(typeof a.type === 'string' && { type: a.type }), rules };
    writes.push({ write: { kind: 'tracking_plan', segmentId: resource.segmentId, body }, object, fingerprint: fingerprint(resource.attributes) });
  }

  // Destination functions planned here, by the metadata id a destination running one names.
  const plannedFunctions = new Map<string, { segmentId: string; displayName: string }>();
  const unmovedFunctions = new Map<string, string>();
  // Insert functions planned here, by the hex id an instance names them with (Segment strips `ifnd_`).
  const plannedInsertFunctions = new Map<string, string>();
  for (const resource of byType('segment_function')) {
    const a = resource.attributes;
    const name = nameOf(resource);
    const kind = str(a.resource_type) ?? str(a.resourceType);
    const cannot = (reason: string) => report({ kind: 'function', segmentId: resource.segmentId, name, outcome: 'cannot', reason });
    if (kind === 'INSERT_SOURCE') {
      cannot(`resource_type: INSERT_SOURCE (a source insert function): Switchyard runs SOURCE, DESTINATION and INSERT_DESTINATION functions only; do what it did with a transformation on the source (${MIGRATING_DOC})`);
      continue;
    }
    if (!kind || !(FUNCTION_KINDS as readonly string[]).includes(kind)) {
      cannot(`resource_type: ${kind === undefined ? 'is missing' : `"${kind}" is not`} one of ${FUNCTION_KINDS.join(', ')}`);
      continue;
    }
    if (codeRefusals[resource.segmentId]) {
      cannot(codeRefusals[resource.segmentId]);
      unmovedFunctions.set(functionMetadataId(resource.segmentId), resource.segmentId);
      continue;
    }
    const changes = FUNCTION_CHANGES[kind] ? [FUNCTION_CHANGES[kind]] : [];
    const body = functionBody(a, kind);
    // Segment's provider writes display_name null for destination functions. Their display name is
    // the key `integrations` turns their destinations off by, and an instance's name defaults to
    // it: the first destination running it lends its name, said in the report.
    const lender = kind === 'DESTINATION' && body.displayName === undefined ? byType('segment_destination').find((d) => metadataIdOf(d.attributes) === functionMetadataId(resource.segmentId)) : undefined;
    const lent = lender && str(lender.attributes.name);
    if (lent) {
      body.displayName = lent.slice(0, 120);
      changes.push(`display_name: null in the export (Segment's provider drops it for destination functions); named "${lent.slice(0, 120)}" after the destination ${lender.segmentId} running it, which is the key \`integrations\` turns it off by: rename it with PATCH /admin/functions/:id if Segment's was other (${MIGRATING_DOC})`);
    }
    const object = report({ kind: 'function', segmentId: resource.segmentId, name: typeof body.displayName === 'string' ? body.displayName : name, outcome: changes.length > 0 ? 'changed' : 'unchanged', ...(changes.length > 0 && { changes }) });
    writes.push({ write: { kind: 'function', segmentId: resource.segmentId, body }, object, fingerprint: fingerprint(lent ? [a, lent] : a) });
    if (kind === 'DESTINATION') plannedFunctions.set(functionMetadataId(resource.segmentId), { segmentId: resource.segmentId, displayName: name });
    if (kind === 'INSERT_DESTINATION') plannedInsertFunctions.set(functionMetadataId(resource.segmentId), resource.segmentId);
  }
  // The function's Switchyard id is not known before it is written: the write names it by Segment id.
  const lookup = (metadataId: string) => {
    const fn = plannedFunctions.get(metadataId);
    return fn && { functionId: `segment:${fn.segmentId}`, displayName: fn.displayName };
  };

  const subscriptions = byType('segment_destination_subscription');
  const destinationIds = new Set(byType('segment_destination').map((r) => r.segmentId));
  const writtenDestinations = new Set<string>();
  // Destinations that move running a function: an insert function cannot be put before them.
  const functionDestinations = new Set<string>();
  for (const resource of byType('segment_destination')) {
    const a = resource.attributes;
    const name = nameOf(resource);
    const sourceSegmentId = str(a.source_id) ?? str(a.sourceId);
    const unmovedFunction = unmovedFunctions.get(metadataIdOf(a) ?? '');
    if (unmovedFunction) {
      report({ kind: 'destination', segmentId: resource.segmentId, name, outcome: 'cannot', reason: `it runs the function ${unmovedFunction}, which cannot move (see its line)` });
      continue;
    }
    const read = readSegmentDestination(a, lookup);
    if (!read.ok) {
      report({ kind: 'destination', segmentId: resource.segmentId, name, outcome: 'cannot', reason: `${read.field}: ${read.rule}` });
      continue;
    }
    if (!sourceSegmentId || !sourceIds.has(sourceSegmentId)) {
      report({
        kind: 'destination',
        segmentId: resource.segmentId,
        name,
        outcome: 'cannot',
        reason: `its source ${sourceSegmentId ?? '(none named)'} is not in the export (an Engage space's source, or one left out): import that source too, or make this destination on a Switchyard source by hand (${MIGRATING_DOC})`,
      });
      continue;
    }
    const { destination } = read;
    const changes = [...destination.changes];
    const secretsNeeded: string[] = [];
    const body: Record<string, unknown> = { ...destination.body };
    // A function destination's secrets are among its settings; a masked value is never sent as one.
    const settings = destination.kind === 'function' ? { ...destination.body.settings } : undefined;
    if (settings) body.settings = settings;
    const into = settings ?? body;
    for (const setting of destination.maskedSecrets) {
      const given = secrets[resource.segmentId]?.[setting];
      if (given) into[setting] = given;
      else {
        if (settings) delete settings[setting];
        secretsNeeded.push(`${resource.segmentId}.${setting}`);
      }
    }
    if (secretsNeeded.length > 0) changes.push(`${secretsNeeded.map((s) => s.split('.').pop()).join(', ')}: exported masked; the destination is made without it until --secrets gives it (${secretsNeeded.join(', ')})`);
    if (destination.kind === 'actions') {
      const mappings: Record<string, unknown>[] = [];
      for (const sub of subscriptions.filter((s) => destinationOfSubscription(s) === resource.segmentId)) {
        const read = subscriptionMapping(sub);
        if ('reason' in read) report({ kind: 'subscription', segmentId: sub.segmentId, name: nameOf(sub), outcome: 'cannot', reason: read.reason });
        else {
          mappings.push(read.mapping);
          report({ kind: 'subscription', segmentId: sub.segmentId, name: nameOf(sub), outcome: 'unchanged' });
        }
      }
      if (mappings.length === 0) {
        report({
          kind: 'destination',
          segmentId: resource.segmentId,
          name,
          outcome: 'cannot',
          reason: `a Webhooks (Actions) destination with no subscription Switchyard can send: nothing would ever be delivered (${MIGRATING_DOC})`,
        });
        continue;
      }
      body.mappings = mappings.slice(0, 5);
      if (mappings.length > 5) changes.push(`mappings: Segment allows ${mappings.length} subscriptions here; Switchyard keeps the first 5`);
    }
    writtenDestinations.add(resource.segmentId);
    if (destination.kind === 'function') functionDestinations.add(resource.segmentId);
    const object = report({
      kind: 'destination',
      segmentId: resource.segmentId,
      name,
      outcome: changes.length > 0 ? 'changed' : 'unchanged',
      ...(changes.length > 0 && { changes }),
      ...(secretsNeeded.length > 0 && { secretsNeeded }),
    });
    const own = subscriptions.filter((s) => destinationOfSubscription(s) === resource.segmentId).map((s) => s.attributes);
    const functionSegmentId = destination.kind === 'function' ? plannedFunctions.get(metadataIdOf(a) ?? '')?.segmentId : undefined;
    writes.push({
      write: { kind: 'destination', segmentId: resource.segmentId, sourceSegmentId, body, ...(functionSegmentId && { functionSegmentId }) },
      object,
      fingerprint: fingerprint([a, own, Object.keys(secrets[resource.segmentId] ?? {}).sort()]),
    });
  }
  for (const sub of subscriptions) {
    const destination = destinationOfSubscription(sub);
    if (destination && destinationIds.has(destination)) continue;
    report({ kind: 'subscription', segmentId: sub.segmentId, name: nameOf(sub), outcome: 'cannot', reason: `its destination ${destination ?? '(none named)'} is not in the export` });
  }
  // Subscriptions of a destination that cannot move cannot move either.
  for (const sub of subscriptions) {
    const destination = destinationOfSubscription(sub);
    if (!destination || !destinationIds.has(destination) || writtenDestinations.has(destination)) continue;
    const line = objects.find((o) => o.kind === 'subscription' && o.segmentId === sub.segmentId);
    if (line) Object.assign(line, { outcome: 'cannot', reason: line.reason ?? `its destination ${destination} cannot move` });
    else report({ kind: 'subscription', segmentId: sub.segmentId, name: nameOf(sub), outcome: 'cannot', reason: `its destination ${destination} cannot move` });
  }

  for (const resource of byType('segment_destination_filter')) {
    const a = resource.attributes;
    const destination = str(a.destination_id) ?? str(a.destinationId) ?? (resource.segmentId.includes(':') ? resource.segmentId.split(':')[0] : undefined);
    if (!destination || !writtenDestinations.has(destination)) {
      report({ kind: 'filter', segmentId: resource.segmentId, name: nameOf(resource), outcome: 'cannot', reason: `its destination ${destination ?? '(none named)'} does not move` });
      continue;
    }
    const object = report({ kind: 'filter', segmentId: resource.segmentId, name: nameOf(resource), outcome: 'unchanged' });
    writes.push({ write: { kind: 'filter', segmentId: resource.segmentId, destinationSegmentId: destination, body: filterBody(a) }, object, fingerprint: fingerprint(a) });
  }

  // An insert function instance moves onto the destination it names when both it and its function
  // move: at most one per destination, webhooks or actions; a masked secret is asked for by name.
  const withInstance = new Set<string>();
  for (const resource of byType('segment_insert_function_instance')) {
    const a = resource.attributes;
    const name = nameOf(resource);
    const cannot = (reason: string) => report({ kind: 'insert_function_instance', segmentId: resource.segmentId, name, outcome: 'cannot', reason });
    const functionRef = str(a.function_id) ?? str(a.functionId);
    const destination = str(a.integration_id) ?? str(a.integrationId);
    const functionSegmentId = functionRef === undefined ? undefined : plannedInsertFunctions.get(functionMetadataId(functionRef));
    if (!functionSegmentId) {
      cannot(`function_id: its insert function ${functionRef ?? '(none named)'} is not in the export, or cannot move (see its line): export it too, or attach it by hand (POST /admin/insert-function-instances; ${MIGRATING_DOC})`);
      continue;
    }
    if (!destination || !writtenDestinations.has(destination)) {
      cannot(`integration_id: its destination ${destination ?? '(none named)'} does not move (see its line)`);
      continue;
    }
    if (functionDestinations.has(destination)) {
      cannot(`integration_id: its destination ${destination} runs a destination function; an insert function runs before a webhooks or actions destination (${MIGRATING_DOC})`);
      continue;
    }
    if (withInstance.has(destination)) {
      cannot(`integration_id: another insert function instance in the export is on destination ${destination}; a destination runs at most one`);
      continue;
    }
    withInstance.add(destination);
    let given: unknown = a.settings;
    if (typeof given === 'string') {
      try {
        given = JSON.parse(given);
      } catch {
        given = undefined;
      }
    }
    const settings: Record<string, unknown> = isObject(given) ? { ...given } : {};
    const secretsNeeded: string[] = [];
    for (const [setting, value] of Object.entries(settings)) {
      if (!isMaskedSecret(value)) continue;
      const secret = secrets[resource.segmentId]?.[setting];
      if (secret) settings[setting] = secret;
      else {
        delete settings[setting];
        secretsNeeded.push(`${resource.segmentId}.${setting}`);
      }
    }
    const changes = secretsNeeded.length > 0 ? [`${secretsNeeded.map((s) => s.split('.').pop()).join(', ')}: exported masked; the instance is made without it until --secrets gives it (${secretsNeeded.join(', ')})`] : [];
    const object = report({
      kind: 'insert_function_instance',
      segmentId: resource.segmentId,
      name,
      outcome: changes.length > 0 ? 'changed' : 'unchanged',
      ...(changes.length > 0 && { changes }),
      ...(secretsNeeded.length > 0 && { secretsNeeded }),
    });
    const body = { ...(str(a.name) && { name: str(a.name)!.slice(0, 120) }), enabled: a.enabled === true, settings };
    writes.push({
      write: { kind: 'insert_function_instance', segmentId: resource.segmentId, functionSegmentId, destinationSegmentId: destination, body },
      object,
      fingerprint: fingerprint([a, Object.keys(secrets[resource.segmentId] ?? {}).sort()]),
    });
  }

  for (const resource of byType('segment_transformation')) {
    const a = resource.attributes;
    const name = nameOf(resource);
    const sourceSegmentId = str(a.source_id) ?? str(a.sourceId);
    const cannot = (reason: string) => report({ kind: 'transformation', segmentId: resource.segmentId, name, outcome: 'cannot', reason });
    if (!sourceSegmentId || !sourceIds.has(sourceSegmentId)) {
      cannot(`its source ${sourceSegmentId ?? '(none named)'} is not in the export: import that source too, or make the transformation on a Switchyard source by hand (POST /admin/transformations; ${MIGRATING_DOC})`);
      continue;
    }
    const hashing = a.hashPropertiesConfiguration ?? a.hash_properties_configuration;
    if (hashing !== undefined && hashing !== null) {
      cannot(`hashPropertiesConfiguration: Switchyard does not hash properties, and moving it without would send them in clear; hash them before sending, or drop them with allowProperties (${MIGRATING_DOC})`);
      continue;
    }
    const body: Record<string, unknown> = { name: name.slice(0, 200), ...transformationBody(a) };
    const metadataId = body.destinationMetadataId;
    // Scoped to a destination function: the function's Switchyard id (known once it is written) gives its metadata id.
    const scopedFunction = typeof metadataId === 'string' ? plannedFunctions.get(metadataId) : undefined;
    const unmovedFunction = typeof metadataId === 'string' ? unmovedFunctions.get(metadataId) : undefined;
    if (unmovedFunction) {
      cannot(`it is scoped to the destination function ${unmovedFunction}, which cannot move (see its line)`);
      continue;
    }
    if (typeof metadataId === 'string' && !scopedFunction && !SWITCHYARD_CATALOG_IDS.includes(metadataId)) {
      cannot(`it is scoped to the catalog destination ${metadataId}, which does not move: a transformation scoped to it would apply to nothing (${MIGRATING_DOC})`);
      continue;
    }
    const compiled = compileTransformation(resource.segmentId, body as unknown as TransformationRules);
    if (!compiled.ok) {
      cannot(`${compiled.error.field}: ${compiled.error.message}`);
      continue;
    }
    const object = report({ kind: 'transformation', segmentId: resource.segmentId, name, outcome: 'unchanged' });
    writes.push({ write: { kind: 'transformation', segmentId: resource.segmentId, sourceSegmentId, body, ...(scopedFunction && { functionSegmentId: scopedFunction.segmentId }) }, object, fingerprint: fingerprint(a) });
  }

  for (const resource of byType('segment_source_tracking_plan_connection')) {
    const a = resource.attributes;
    const [idSource, idPlan] = resource.segmentId.split(':');
    const sourceSegmentId = str(a.source_id) ?? idSource;
    const planSegmentId = str(a.tracking_plan_id) ?? idPlan;
    const name = `${sourceSegmentId ?? '?'} → ${planSegmentId ?? '?'}`;
    if (!sourceSegmentId || !planSegmentId || !sourceIds.has(sourceSegmentId) || !planIds.has(planSegmentId)) {
      report({
        kind: 'plan_connection',
        segmentId: resource.segmentId,
        name,
        outcome: 'cannot',
        reason: `the export does not hold both its source and its plan: connect them with POST /admin/tracking-plans/:id/sources (${MIGRATING_DOC})`,
      });
      continue;
    }
    const changes = a.schema_settings !== undefined && a.schema_settings !== null ? ["schema_settings: set them with PATCH /admin/sources/:id/settings (Segment's shape)"] : [];
    const object = report({ kind: 'plan_connection', segmentId: resource.segmentId, name, outcome: changes.length > 0 ? 'changed' : 'unchanged', ...(changes.length > 0 && { changes }) });
    writes.push({ write: { kind: 'plan_connection', segmentId: resource.segmentId, planSegmentId, sourceSegmentId }, object, fingerprint: fingerprint(resource.segmentId) });
  }

  for (const resource of byType('segment_label')) {
    report({ kind: 'label', segmentId: resource.segmentId, name: nameOf(resource), outcome: 'unchanged', changes: undefined, reason: undefined });
  }
  for (const resource of resources) {
    const cannot = CANNOT[resource.type];
    if (cannot) report({ kind: cannot.kind, segmentId: resource.segmentId, name: nameOf(resource), outcome: 'cannot', reason: cannot.reason });
    else if (!KNOWN.has(resource.type))
      report({ kind: 'unknown', segmentId: resource.segmentId, name: nameOf(resource), outcome: 'cannot', reason: `${resource.type} is not a Segment resource this import knows (${MIGRATING_DOC})` });
  }
  // Undefined fields (a label's) are not part of the report.
  for (const object of objects) for (const key of Object.keys(object) as Array<keyof ImportObject>) if (object[key] === undefined) delete object[key];
  return { objects, writes };
}

/** Every Terraform resource type the import reads or names as one that cannot move: the migrating page names each. */
export function segmentResourceTypes(): string[] {
  return [...KNOWN, ...Object.keys(CANNOT)];
}

const KNOWN = new Set([
  'segment_source',
  'segment_tracking_plan',
  'segment_destination',
  'segment_destination_subscription',
  'segment_destination_filter',
  'segment_transformation',
  'segment_function',
  'segment_insert_function_instance',
  'segment_source_tracking_plan_connection',
  'segment_label',
]);

/** The report's closing counts, by kind. */
export function countsByKind(objects: ImportObject[]): Record<string, Record<Outcome, number>> {
  const counts: Record<string, Record<Outcome, number>> = {};
  for (const { kind, outcome } of objects) {
    counts[kind] ??= { unchanged: 0, changed: 0, cannot: 0 };
    counts[kind][outcome]++;
  }
  return counts;
}

export { isMaskedSecret };
