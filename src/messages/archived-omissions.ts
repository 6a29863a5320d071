import type { MessageBody } from '../delivery/types';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body with the names the plan omitted at ingest left out again, `properties.coupon` /
 * `traits.age` / `properties.card.number` (the section is what comes before the first dot, the rest
 * is the name as sent). The archive keeps the call as sent, before any omission, with the names
 * omitted; a replay re-applies them whatever today's plan says (a changed or disconnected plan
 * included), because an omission is final, as on Segment: what a plan kept out of Temporal and the
 * destinations stays out. `context.protocols.omitted` lists them beside what today's plan omitted.
 */
export function withArchivedOmissions(body: MessageBody, omitted: readonly string[] | undefined): MessageBody {
  if (!omitted || omitted.length === 0) return body;
  const out: MessageBody = { ...body };
  for (const section of ['properties', 'traits'] as const) {
    const names = new Set(omitted.filter((entry) => entry.startsWith(`${section}.`)).map((entry) => entry.slice(section.length + 1)));
    const values = body[section];
    if (names.size === 0 || !isObject(values)) continue;
    out[section] = Object.fromEntries(Object.entries(values).filter(([name]) => !names.has(name)));
  }
  const context = isObject(body.context) ? body.context : {};
  const protocols = isObject(context.protocols) ? context.protocols : {};
  const today = Array.isArray(protocols.omitted) ? protocols.omitted.filter((entry): entry is string => typeof entry === 'string') : [];
  out.context = { ...context, protocols: { ...protocols, omitted: [...new Set([...today, ...omitted])] } };
  return out;
}
