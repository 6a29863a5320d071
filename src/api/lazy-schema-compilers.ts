import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's own compilers (Ajv for requests, fast-json-stringify for replies), each route's schema
 * compiled the first time the route is called instead of when the app starts. The API has about a
 * hundred routes and an instance used only a few of them (a test's, a process answering health
 * checks) spent about a second of CPU compiling all of them; each compiled function is the one
 * Fastify would have made, and is kept once made.
 *
 * What changes: a schema Ajv or fast-json-stringify cannot compile fails its route's first call
 * (a 500) instead of the start. test/integration/api-docs.test.ts compiles every route's schemas
 * (`compileEverySchema`), so such a schema fails the tests before it ships. (Fastify takes a custom
 * validator compiler's `headers` schemas as written, without lower-casing their keys: no route has one.)
 */
type ValidatorFactory = (externalSchemas: unknown, options: unknown) => (route: unknown) => Validator;
type Validator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown };
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: unknown) => (data: unknown) => string;

/** The compiles deferred and not yet made, so a check can force them all. */
const pending = new Set<() => unknown>();

/**
 * Compiles every route schema deferred so far and not yet compiled, throwing the first error (with
 * its route); returns how many it compiled. For the test that every route's schemas compile.
 */
export function compileEverySchema(): number {
  const now = [...pending];
  for (const compile of now) compile();
  return now.length;
}

function deferred<T>(route: unknown, compile: () => T): () => T {
  let compiled: T | undefined;
  const once = (): T => {
    if (compiled === undefined) {
      try {
        compiled = compile();
      } catch (err) {
        const { method, url, httpPart, httpStatus } = route as Record<string, string>;
        throw new Error(`${method} ${url} ${httpPart ?? `reply ${httpStatus}`}: ${(err as Error).message}`, { cause: err });
      }
      pending.delete(once);
    }
    return compiled;
  };
  pending.add(once);
  return once;
}

function lazyValidator(route: unknown, compile: () => Validator): Validator {
  const compiled = deferred(route, compile);
  const validate: Validator = (data, context) => {
    const fn = compiled();
    const valid = fn(data, context);
    validate.errors = fn.errors;
    return valid;
  };
  // Fastify hands Ajv the request as the root's parent when the function has a schemaEnv (so a
  // root value may be replaced): reading it compiles, as the first call would.
  Object.defineProperty(validate, 'schemaEnv', { get: () => (compiled() as { schemaEnv?: unknown }).schemaEnv });
  return validate;
}

function lazySerializer(route: unknown, compile: () => (data: unknown) => string): (data: unknown) => string {
  const compiled = deferred(route, compile);
  return (data) => compiled()(data);
}

export function lazySchemaCompilers(): NonNullable<FastifyServerOptions['schemaController']> {
  const validators = (AjvCompiler as unknown as () => ValidatorFactory)();
  const serializers = (SerializerSelector as unknown as () => SerializerFactory)();
  return {
    compilersFactory: {
      buildValidator: ((externalSchemas: unknown, options: unknown) => {
        const compilerFor = validators(externalSchemas, options);
        return (route: unknown) => lazyValidator(route, () => compilerFor(route));
      }) as never,
      buildSerializer: ((externalSchemas: unknown, options: unknown) => {
        const compilerFor = serializers(externalSchemas, options);
        return (route: unknown) => lazySerializer(route, () => compilerFor(route));
      }) as never,
    },
  };
}
