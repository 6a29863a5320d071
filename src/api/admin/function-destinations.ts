import { acceptedInstanceSettings, maskedInstanceSettings } from '../../functions/instance-settings';
import type { Destination, FunctionInstance, Store } from '../../store/types';
import { badRequest } from '../errors';

/**
 * A `function` destination through the admin API: created under a source as
 * `{type: "function", functionId, settings}`, its settings checked against the function's
 * definitions, and answered with every sensitive value masked (Segment's `••••••••••abcd`).
 */

async function destinationFunction(store: Store, functionId: string) {
  const fn = await store.functions.get(functionId);
  if (!fn) throw badRequest(`functionId: no function ${functionId} (create it with POST /admin/functions)`);
  if (fn.resourceType !== 'DESTINATION') throw badRequest(`functionId: ${functionId} is a ${fn.resourceType} function; a function destination runs a DESTINATION function (dfn_…)`);
  return fn;
}

/** The create body's function fields, checked: what the store keeps, or a 400 naming the field and the rule. */
export async function acceptedFunctionDestination(store: Store, body: { type?: string; functionId?: string; settings?: Record<string, unknown> }): Promise<FunctionInstance | undefined> {
  if (body.type !== 'function') {
    if (body.functionId !== undefined) throw badRequest('functionId: only a function destination (type "function") runs a function');
    if (body.settings !== undefined) throw badRequest('settings: only a function destination (type "function") has settings; a Segment-shaped body names its catalog entry with metadataId');
    return undefined;
  }
  if (body.functionId === undefined) throw badRequest('functionId: is required for a function destination');
  const fn = await destinationFunction(store, body.functionId);
  const accepted = acceptedInstanceSettings(fn.settings, body.settings ?? {});
  if ('rule' in accepted) throw badRequest(accepted.rule);
  return { functionId: fn.id, settings: accepted.settings };
}

/** A PATCH's `settings`: the new set (masked values sent back keep theirs), or a 400. */
export async function patchedFunctionSettings(store: Store, current: Destination | undefined, settings: Record<string, unknown> | undefined): Promise<FunctionInstance | undefined> {
  if (settings === undefined || !current) return undefined;
  if (current.type !== 'function' || !current.function) throw badRequest('settings: only a function destination (type "function") has settings');
  const fn = await store.functions.get(current.function.functionId);
  // Its function deleted: the settings can no longer be checked, so they are not changed.
  if (!fn) throw badRequest(`settings: the destination's function ${current.function.functionId} no longer exists`);
  const accepted = acceptedInstanceSettings(fn.settings, settings, current.function.settings);
  if ('rule' in accepted) throw badRequest(accepted.rule);
  return { functionId: fn.id, settings: accepted.settings };
}

/** What an answer shows of a function destination: its function and its settings, sensitive ones masked (all of them when the function is gone). */
export async function functionView(store: Store, destination: Destination): Promise<{ functionId?: string; settings?: Record<string, unknown> }> {
  if (destination.type !== 'function' || !destination.function) return {};
  const { functionId, settings } = destination.function;
  const fn = await store.functions.get(functionId);
  const definitions = fn?.settings ?? Object.keys(settings).map((name) => ({ name, label: name, description: '', type: 'STRING' as const, required: false, sensitive: true }));
  return { functionId, settings: maskedInstanceSettings(definitions, settings) };
}
