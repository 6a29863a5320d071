/**
 * Which handler a function's kind calls, by name, as Segment's runtime dispatches: a source
 * function's `onRequest`, and for destination and insert functions the handler of the event's
 * type. A type with no handler (or no handler defined) is Segment's EventNotSupported.
 */

export const FUNCTION_KINDS = ['SOURCE', 'DESTINATION', 'INSERT_DESTINATION'] as const;
export type FunctionKind = (typeof FUNCTION_KINDS)[number];

const EVENT_HANDLERS: Record<string, string> = {
  track: 'onTrack',
  identify: 'onIdentify',
  page: 'onPage',
  screen: 'onScreen',
  group: 'onGroup',
  alias: 'onAlias',
  delete: 'onDelete',
};

export function expectedHandlers(kind: FunctionKind): string[] {
  return kind === 'SOURCE' ? ['onRequest'] : Object.values(EVENT_HANDLERS);
}

/** The handler an event of `type` calls, or undefined for a type Segment does not dispatch. */
export function handlerFor(type: unknown): string | undefined {
  return typeof type === 'string' && Object.hasOwn(EVENT_HANDLERS, type) ? EVENT_HANDLERS[type] : undefined;
}

/** Segment's id prefix of each kind. */
export const ID_PREFIX: Record<FunctionKind, string> = { SOURCE: 'sfnc_', DESTINATION: 'dfn_', INSERT_DESTINATION: 'ifnd_' };
