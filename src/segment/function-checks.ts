import { compileFunctionCode } from '../programs/compile-program';
import { FUNCTION_KINDS, type FunctionKind } from '../functions/handlers';
import type { SegmentResource } from './read-export';

/**
 * An exported function's code run through the same check POST /admin/functions makes when it is
 * saved (it compiles in the engine that runs it, and defines a handler its kind calls), so a dry
 * run says "cannot move" with the reason applying would be refused with. Nothing of the code runs.
 */
export async function functionCodeRefusals(resources: SegmentResource[]): Promise<Record<string, string>> {
  const refusals: Record<string, string> = {};
  for (const resource of resources) {
    if (resource.type !== 'segment_function') continue;
    const a = resource.attributes;
    const kind = a.resource_type ?? a.resourceType;
    if (typeof kind !== 'string' || !(FUNCTION_KINDS as readonly string[]).includes(kind)) continue;
    if (typeof a.code !== 'string') {
      refusals[resource.segmentId] = "Switchyard refuses it (400): code: is required (the function's JavaScript)";
      continue;
    }
    const compiled = await compileFunctionCode(a.code, kind as FunctionKind);
    if (!compiled.ok) refusals[resource.segmentId] = `Switchyard refuses it (400): code: ${compiled.error.rule}`;
  }
  return refusals;
}
