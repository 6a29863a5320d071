import { settingsFromJsonText } from '../mappings/segment-subscription';

/**
 * A Segment destination (Public API `{sourceId, metadataId, name, enabled, settings}`, or Terraform's
 * `segment_destination` with `metadata = {id}` and `settings = jsonencode({...})`) read as the
 * Switchyard destination it becomes, or why it cannot be one. Pure: the admin route and the
 * workspace import both read destinations here, so they say the same thing.
 */

/** Segment's catalog id of the classic Webhooks destination. */
export const WEBHOOKS_METADATA_ID = '54521fdc25e721e32a72ef04';
/** Segment's catalog id of Webhooks (Actions). */
export const WEBHOOKS_ACTIONS_METADATA_ID = '614a3c7d791c91c41bae7599';

/**
 * The catalog entries Switchyard takes and the kind each becomes. A destination function is the
 * third kind: its metadata id is the hex part of its `dfn_` id, looked up among the functions
 * Switchyard holds (`FunctionLookup` below).
 */
const CATALOG_KINDS: Record<string, 'webhooks' | 'actions'> = {
  [WEBHOOKS_METADATA_ID]: 'webhooks',
  [WEBHOOKS_ACTIONS_METADATA_ID]: 'actions',
};

/** The catalog ids a Switchyard destination answers to (a transformation's destinationMetadataId). */
export const SWITCHYARD_CATALOG_IDS: readonly string[] = [WEBHOOKS_METADATA_ID, WEBHOOKS_ACTIONS_METADATA_ID];

/**
 * A Switchyard destination's catalog id, as Segment names its kind: an actions destination (one
 * with mappings) is Webhooks (Actions); a destination function's is the hex of its `dfn_` id, as
 * Segment's is, so a transformation scoped to Webhooks never reaches it.
 */
export function catalogIdOf(destination: { mappings?: unknown; function?: { functionId: string } }): string {
  if (destination.function) return functionMetadataIdOf(destination.function.functionId);
  return destination.mappings !== undefined ? WEBHOOKS_ACTIONS_METADATA_ID : WEBHOOKS_METADATA_ID;
}

/** A destination function's metadata id: its id without the `dfn_` prefix (Segment's form). */
export function functionMetadataIdOf(functionId: string): string {
  return functionId.startsWith('dfn_') ? functionId.slice('dfn_'.length) : functionId;
}

/** Where a destination function's metadata id (the hex of its `dfn_` id) is resolved among the functions Switchyard holds. */
export type FunctionLookup = (metadataId: string) => { functionId: string; displayName: string } | undefined;

/** A metadata id that could name a destination function: the 24 hex characters after `dfn_`. */
export const FUNCTION_METADATA_ID = /^[0-9a-f]{24}$/;

/** Segment masks a secret as ten bullets and its last four characters (`••••••••••abcd`). */
export function isMaskedSecret(value: unknown): boolean {
  return typeof value === 'string' && /^•{4,}[^•]{0,4}$/.test(value);
}

export interface SegmentDestinationInput {
  sourceId?: unknown;
  source_id?: unknown;
  metadataId?: unknown;
  metadata?: unknown;
  name?: unknown;
  enabled?: unknown;
  settings?: unknown;
}

/** The Switchyard create body a Segment destination becomes (webhooks, or actions with mappings given beside it). */
export interface ReadDestination {
  kind: 'webhooks' | 'actions' | 'function';
  body: {
    name?: string;
    enabled: boolean;
    type?: 'actions' | 'function';
    sharedSecret?: string;
    webhooks?: Array<{ url: string; headers?: Record<string, string> }>;
    functionId?: string;
    settings?: Record<string, unknown>;
  };
  /** What differs from how Segment would deliver, each named (the import reports them). */
  changes: string[];
  /** Settings Segment exported masked: their values must be supplied (the import asks for them by name). */
  maskedSecrets: string[];
}

export type DestinationReading = { ok: true; destination: ReadDestination } | { ok: false; status: 400 | 422; field: string; rule: string };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The catalog id a destination names, as the Public API (`metadataId`) or Terraform (`metadata.id`) writes it. */
export function metadataIdOf(input: SegmentDestinationInput): string | undefined {
  if (typeof input.metadataId === 'string') return input.metadataId;
  if (isObject(input.metadata) && typeof input.metadata.id === 'string') return input.metadata.id;
  return undefined;
}

/** The catalog name to say in a refusal: the Public API's `metadata.name`, else the instance's name, else the id. */
function catalogName(input: SegmentDestinationInput, metadataId: string): string {
  if (isObject(input.metadata) && typeof input.metadata.name === 'string') return input.metadata.name;
  return typeof input.name === 'string' && input.name ? input.name : `catalog entry ${metadataId}`;
}

export function readSegmentDestination(input: SegmentDestinationInput, lookup?: FunctionLookup): DestinationReading {
  const metadataId = metadataIdOf(input);
  if (metadataId === undefined) return { ok: false, status: 400, field: 'metadataId', rule: 'is required (or metadata.id): the Segment catalog entry this destination is an instance of' };
  const fn = Object.hasOwn(CATALOG_KINDS, metadataId) ? undefined : lookup?.(metadataId);
  const kind = fn ? 'function' : CATALOG_KINDS[metadataId];
  if (!kind) {
    return {
      ok: false,
      status: 422,
      field: 'metadataId',
      rule: `${catalogName(input, metadataId)} is a Segment catalog destination (${metadataId}); Switchyard delivers to webhooks and functions: send to a webhook of your own that calls it, or keep it on Segment (docs/migrating-from-segment.md)`,
    };
  }
  let settings: Record<string, unknown> = {};
  if (typeof input.settings === 'string') {
    const read = settingsFromJsonText(input.settings);
    if ('rule' in read) return { ok: false, status: 400, field: 'settings', rule: read.rule };
    settings = read.settings;
  } else if (isObject(input.settings)) settings = input.settings;
  else if (input.settings !== undefined && input.settings !== null) return { ok: false, status: 400, field: 'settings', rule: "must be an object or its JSON string (Terraform's jsonencode)" };
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') return { ok: false, status: 400, field: 'enabled', rule: 'must be boolean' };
  if (input.name !== undefined && input.name !== null && typeof input.name !== 'string') return { ok: false, status: 400, field: 'name', rule: 'must be string' };

  const changes: string[] = [];
  const maskedSecrets: string[] = [];
  const body: ReadDestination['body'] = { enabled: input.enabled === true };
  if (typeof input.name === 'string' && input.name) body.name = input.name.slice(0, 200);
  if (fn) {
    // A destination function's instance: its settings are the function's, checked when it is created.
    for (const [name, value] of Object.entries(settings)) if (isMaskedSecret(value)) maskedSecrets.push(name);
    return { ok: true, destination: { kind, body: { ...body, type: 'function', functionId: fn.functionId, settings }, changes, maskedSecrets } };
  }
  const secret = settings.sharedSecret;
  if (isMaskedSecret(secret)) maskedSecrets.push('sharedSecret');
  else if (typeof secret === 'string' && secret !== '') body.sharedSecret = secret;

  if (kind === 'actions') {
    body.type = 'actions';
    for (const key of Object.keys(settings)) if (key !== 'sharedSecret') changes.push(`settings.${key}: not used by Switchyard (its Webhooks (Actions) destination has a shared secret only)`);
    return { ok: true, destination: { kind, body, changes, maskedSecrets } };
  }

  const webhooks: Array<{ url: string; headers?: Record<string, string> }> = [];
  const hooks = Array.isArray(settings.hooks) ? settings.hooks : [];
  for (const hook of hooks) {
    if (!isObject(hook) || typeof hook.hook !== 'string' || hook.hook === '') continue;
    const headers: Record<string, string> = {};
    // Segment's settings page keeps an empty row ({key: "", value: ""}): not a header.
    for (const header of Array.isArray(hook.headers) ? hook.headers : [])
      if (isObject(header) && typeof header.key === 'string' && header.key !== '') headers[header.key] = typeof header.value === 'string' ? header.value : JSON.stringify(header.value ?? '');
    webhooks.push(Object.keys(headers).length > 0 ? { url: hook.hook, headers } : { url: hook.hook });
  }
  // globalHook: the single URL of Segment's older settings; usually the first hook again.
  if (typeof settings.globalHook === 'string' && settings.globalHook !== '' && !webhooks.some((w) => w.url === settings.globalHook)) webhooks.push({ url: settings.globalHook });
  if (webhooks.length === 0) return { ok: false, status: 400, field: 'settings.hooks', rule: 'holds no webhook URL (hooks[].hook or globalHook): a Webhooks destination needs at least one' };
  if (webhooks.length > 1)
    changes.push(`settings.hooks: Segment sends each event to all ${webhooks.length} URLs; Switchyard tries them in order until one accepts it (make one destination per URL to keep Segment's fan-out)`);
  for (const key of Object.keys(settings)) if (!['hooks', 'globalHook', 'sharedSecret'].includes(key)) changes.push(`settings.${key}: not used by Switchyard`);
  body.webhooks = webhooks;
  return { ok: true, destination: { kind, body, changes, maskedSecrets } };
}
