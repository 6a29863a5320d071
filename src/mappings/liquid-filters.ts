import { Liquid } from 'liquidjs';

/**
 * The mapping kit renders `@liquid` templates with filters it does not know left out silently
 * (`{{ properties.total | dolars }}` renders the total unfiltered), so a typo in a filter name would
 * ship wrong values for every message. Before a mapping is saved each template is parsed by an engine
 * of the same liquidjs version that refuses unknown filters; its filter table is liquidjs's own,
 * the one the kit starts from (the kit only disables some of them, which fail at render instead).
 */
const strictEngine = new Liquid({ strictFilters: true, parseLimit: 1000 });

const UNDEFINED_FILTER = /undefined filter: ([^\s,]+)/;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The unknown filter a template names, if any; other template errors are left to the render check. */
export function unknownLiquidFilter(template: string): string | undefined {
  try {
    strictEngine.parse(template);
    return undefined;
  } catch (err) {
    return UNDEFINED_FILTER.exec(err instanceof Error ? err.message : String(err))?.[1];
  }
}

/**
 * Where in a mapping's `data` an `@liquid` template uses an unknown filter: the JSON pointer of the
 * directive and the filter's name, as the 400 names them.
 */
export function unknownLiquidFilterIn(value: unknown, pointer = ''): { pointer: string; filter: string } | undefined {
  if (Array.isArray(value)) {
    for (const [index, element] of value.entries()) {
      const found = unknownLiquidFilterIn(element, `${pointer}/${index}`);
      if (found) return found;
    }
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const template = value['@liquid'];
  if (typeof template === 'string') {
    const filter = unknownLiquidFilter(template);
    if (filter) return { pointer: pointer || '/', filter };
  }
  for (const [key, child] of Object.entries(value)) {
    const found = unknownLiquidFilterIn(child, key.startsWith('@') ? pointer : `${pointer}/${key}`);
    if (found) return found;
  }
  return undefined;
}
