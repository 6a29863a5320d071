/**
 * Segment's mapping kit (`@segment/actions-core`), loaded through its `mapping-kit` entry points
 * with the two signatures Switchyard uses declared here: the package's own type declarations reach
 * `cross-fetch`, whose `/// <reference lib="dom" />` would change the DOM-free globals every other
 * file is checked against. The kit needs `liquidjs` installed beside it (it requires it undeclared).
 */
type MappingKit = {
  transform(mapping: Record<string, unknown>, data?: Record<string, unknown>): Record<string, unknown>;
};
type MappingValidate = { default(mapping: unknown): void };

// eslint-disable-next-line @typescript-eslint/no-require-imports
const kit = require('@segment/actions-core/mapping-kit') as MappingKit;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const validate = require('@segment/actions-core/mapping-kit/validate') as MappingValidate;

/**
 * Renders a mapping for one event; throws the kit's error when a directive fails on it. The kit
 * renders a copy: its `@replace` writes its defaults (`replacement`, `ignorecase`, `global`) into
 * the options it is given, so rendering the saved mapping (at save, to check it) would change what
 * was saved and what the API shows back.
 */
export const transformMapping = (mapping: Record<string, unknown>, event: Record<string, unknown>) => kit.transform(structuredClone(mapping), event);

/** Throws the kit's validation errors (an AggregateError of ValidationErrors) for a mapping it would refuse to save. */
export const validateMapping = (mapping: unknown) => validate.default(mapping);
