import { violationMessage } from '../../delivery/webhook-rules';
import { maskedMappings, unmaskedMappings } from '../../mappings/masked-headers';
import { authView, DEFAULT_MAPPING_DATA, type ActionsMapping, type DestinationType, type MappingMethod, type OutboundAuth, type TlsSettings } from '../../mappings/types';
import { subscriptionViolation } from '../../mappings/segment-subscription';
import { findAuthViolation, findMappingsViolation } from '../../mappings/validate-mappings';
import type { Destination, NewDestination } from '../../store/types';
import { badRequest } from '../errors';

/** A mapping as a request gives it: headers and data may be left out; Segment's ids and batch settings may be there. */
interface MappingInput {
  name: string;
  enabled: boolean;
  trigger: string;
  settings: { url: string; method: MappingMethod; headers?: Record<string, string>; data?: Record<string, unknown>; enable_batching?: boolean };
  destinationId?: string | null;
  destination_id?: string | null;
}

interface ActionsInput {
  type?: DestinationType;
  webhooks?: unknown[];
  mappings?: MappingInput[];
  auth?: OutboundAuth | null;
  tls?: TlsSettings | null;
}

const withDefaults = (mapping: MappingInput): ActionsMapping => ({
  name: mapping.name,
  enabled: mapping.enabled,
  trigger: mapping.trigger,
  settings: { url: mapping.settings.url, method: mapping.settings.method, headers: mapping.settings.headers ?? {}, data: mapping.settings.data ?? { ...DEFAULT_MAPPING_DATA } },
});

/**
 * The rules of a create (`current` undefined) or PATCH for what depends on the
 * destination's type — webhooks for `webhooks`, mappings for `actions` — and for outbound auth and
 * mutual TLS (either type). Every refusal is a 400 naming the field and the rule, never a value.
 */
export function acceptedActionsSettings(input: ActionsInput, current: Destination | undefined): Pick<NewDestination, 'mappings' | 'auth' | 'tls'> {
  const type = current?.type ?? input.type ?? 'webhooks';
  if (type === 'function') {
    // A destination function's handler makes its requests: it has no URLs or mappings of its own.
    if (input.webhooks !== undefined && input.webhooks.length > 0) throw badRequest("webhooks: a function destination's handler makes its own requests; leave webhooks out");
    if (input.mappings !== undefined) throw badRequest('mappings: only an actions destination (type "actions") has mappings');
  } else if (type === 'webhooks') {
    if (input.mappings !== undefined) throw badRequest('mappings: only an actions destination (type "actions") has mappings');
    if (!current && input.webhooks === undefined) throw badRequest('webhooks: is required');
  } else {
    if (input.webhooks !== undefined && input.webhooks.length > 0) throw badRequest("webhooks: an actions destination sends to its mappings' URLs; leave webhooks out");
    if (!current && input.mappings === undefined) throw badRequest('mappings: is required for an actions destination');
  }
  for (const [index, mapping] of (input.mappings ?? []).entries()) {
    const pasted = subscriptionViolation(mapping, index, current?.id);
    if (pasted) throw badRequest(violationMessage(pasted));
  }
  const unmasked = input.mappings && unmaskedMappings(input.mappings.map(withDefaults), current?.mappings ?? []);
  if (unmasked && 'violation' in unmasked) throw badRequest(violationMessage(unmasked.violation));
  const mappings = unmasked?.mappings;
  const violation = (mappings && findMappingsViolation(mappings)) ?? findAuthViolation(input.auth, input.tls);
  if (violation) throw badRequest(violationMessage(violation));
  return { ...(mappings && { mappings }), ...(input.auth !== undefined && { auth: input.auth }), ...(input.tls !== undefined && { tls: input.tls }) };
}

/** What the API shows of a destination's type, mappings (header values masked), auth (no secrets) and TLS (whether set). */
export function actionsView(destination: Destination, nowMs = Date.now()) {
  return {
    type: destination.type,
    ...(destination.type === 'actions' && {
      mappings: maskedMappings(destination.mappings).map((mapping) => {
        const backpressure = mappingBackpressure(destination, mapping.name, nowMs);
        return { ...mapping, ...(backpressure && { backpressure }) };
      }),
    }),
    ...(destination.auth && { auth: authView(destination.auth) }),
    tlsSet: destination.tls !== null,
  };
}

/** A mapping URL's pause as the API shows it, while it lasts; undefined otherwise. */
export function mappingBackpressure(destination: Destination, name: string, nowMs: number): { until: string; reason: string } | undefined {
  const pressure = destination.mappingBackpressure && Object.hasOwn(destination.mappingBackpressure, name) ? destination.mappingBackpressure[name] : undefined;
  return pressure && pressure.untilMs > nowMs ? { until: new Date(pressure.untilMs).toISOString(), reason: pressure.reason } : undefined;
}
