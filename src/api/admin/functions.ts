import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { preValidationHookHandler } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_CODE_LENGTH } from '../../functions/check-code';
import { compileFunctionCode } from '../../programs/compile-program';
import { FUNCTION_KINDS, handlerFor, type FunctionKind } from '../../functions/handlers';
import { maskSecrets } from '../../functions/masked-settings';
import type { SandboxPool } from '../../functions/sandbox-pool';
import { SETTING_TYPES, type FunctionRecord } from '../../store/functions';
import type { Store } from '../../store/types';
import { audited, recordChange } from '../access/audit-trail';
import { ApiError, badRequest, notFound } from '../errors';
import { errorReplies, IdParams } from './schemas';

/**
 * Functions in Segment's Public API shape: create, list, read, change and delete them, read their
 * versions, deploy one, and run the latest version on a test event without deploying it. A
 * Terraform `segment_function` body (snake_case) is read as the same object, and what GET answers
 * saves back unchanged (its read-only fields are accepted and ignored).
 */

const Setting = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    label: Type.String({ maxLength: 200 }),
    description: Type.String({ maxLength: 2000 }),
    type: Type.Union(SETTING_TYPES.map((t) => Type.Literal(t))),
    required: Type.Boolean(),
    sensitive: Type.Boolean({ description: 'A secret: its values are masked (10 × • and the last 4 characters) in logs, errors and answers.' }),
  },
  { additionalProperties: false },
);

const nullableText = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));

/** What GET answers but a save ignores, so a read object can be saved back as it is. */
const readOnly = {
  id: Type.Optional(Type.String({ maxLength: 100 })),
  createdAt: Type.Optional(Type.String({ maxLength: 40 })),
  updatedAt: Type.Optional(Type.String({ maxLength: 40 })),
  deployedAt: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
  createdBy: Type.Optional(Type.String({ maxLength: 200 })),
  latestVersion: Type.Optional(Type.Integer()),
  deployedVersion: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  isLatestVersion: Type.Optional(Type.Boolean()),
};

const fields = {
  code: Type.String({ maxLength: MAX_CODE_LENGTH, description: "The function's JavaScript, a sloppy-mode script whose handlers are found by name." }),
  displayName: nullableText(120),
  description: nullableText(2000),
  logoUrl: nullableText(2048),
  settings: Type.Optional(Type.Array(Setting, { maxItems: 100 })),
};

const CreateBody = Type.Object({ ...readOnly, ...fields, resourceType: Type.String({ maxLength: 40, description: `One of ${FUNCTION_KINDS.join(', ')}.` }) }, { additionalProperties: false });
const PatchBody = Type.Object({ ...readOnly, ...fields, code: Type.Optional(fields.code), resourceType: Type.Optional(Type.String({ maxLength: 40 })) }, { additionalProperties: false });

const SettingView = Setting;
const ListItemView = Type.Object({
  id: Type.String(),
  resourceType: Type.String(),
  displayName: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  logoUrl: Type.Union([Type.String(), Type.Null()]),
  latestVersion: Type.Integer(),
  deployedVersion: Type.Union([Type.Integer(), Type.Null()]),
  isLatestVersion: Type.Boolean({ description: 'Whether instances run the latest saved version.' }),
  deployedAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
const FunctionView = Type.Object({ ...ListItemView.properties, code: Type.String(), settings: Type.Array(SettingView) });
const VersionView = Type.Object({ id: Type.String(), version: Type.Integer(), code: Type.String(), isDeployed: Type.Boolean(), createdAt: Type.String() });

const DeployBody = Type.Union([Type.Object({ version: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }), Type.Null()]);

const TestBody = Type.Object(
  {
    event: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The event a destination or insert function gets, every field as sent.' })),
    request: Type.Optional(
      Type.Object(
        {
          headers: Type.Optional(Type.Record(Type.String(), Type.String())),
          body: Type.Optional(Type.Unknown()),
          url: Type.Optional(Type.String({ maxLength: 2048 })),
        },
        { additionalProperties: false, description: 'The request a source function gets.' },
      ),
    ),
    settings: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Values of the function's settings, as an instance would have them." })),
  },
  { additionalProperties: false },
);
const TestView = Type.Object({
  status: Type.Union([Type.Literal('SUCCESS'), Type.Literal('ERROR')]),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ type: Type.String(), message: Type.String() })),
  logs: Type.Array(Type.String()),
  requests: Type.Array(Type.Object({ method: Type.String(), url: Type.String(), status: Type.Union([Type.Integer(), Type.Null()]), durationMs: Type.Number() })),
  durationMs: Type.Number(),
});

/** Terraform's `segment_function` attribute names, and the API's. */
const TERRAFORM_NAMES: Record<string, string> = { display_name: 'displayName', resource_type: 'resourceType', logo_url: 'logoUrl' };

/** A Terraform body's snake_case attributes become the API's names before the schema reads them. */
export const readTerraformFunction: preValidationHookHandler = (request, _reply, done) => {
  const body = request.body as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return done();
  for (const [snake, camel] of Object.entries(TERRAFORM_NAMES)) {
    if (!(snake in body)) continue;
    if (camel in body) return done(badRequest(`${snake}: give either ${snake} (Terraform's name) or ${camel}, not both`));
    body[camel] = body[snake];
    delete body[snake];
  }
  done();
};

function kindOf(value: string): FunctionKind {
  if (value === 'INSERT_SOURCE') throw badRequest('resourceType: INSERT_SOURCE (source insert functions) is not supported; use SOURCE, DESTINATION or INSERT_DESTINATION');
  if (!(FUNCTION_KINDS as readonly string[]).includes(value)) throw badRequest(`resourceType: "${value}" is not one of ${FUNCTION_KINDS.join(', ')}`);
  return value as FunctionKind;
}

async function checkedCode(code: string, kind: FunctionKind): Promise<void> {
  const compiled = await compileFunctionCode(code, kind);
  if (!compiled.ok) throw badRequest(`code: ${compiled.error.rule}`);
}

function checkedSettings(settings: Static<typeof Setting>[] | undefined): void {
  const names = new Set<string>();
  for (const [index, setting] of (settings ?? []).entries()) {
    if (names.has(setting.name)) throw badRequest(`settings[${index}].name: "${setting.name}" is defined twice`);
    names.add(setting.name);
  }
}

const DEFAULT_NAMES: Record<FunctionKind, string> = { SOURCE: 'Source function', DESTINATION: 'Destination function', INSERT_DESTINATION: 'Insert function' };

const listItem = (fn: FunctionRecord) => ({
  id: fn.id,
  resourceType: fn.resourceType,
  displayName: fn.displayName,
  description: fn.description,
  logoUrl: fn.logoUrl,
  latestVersion: fn.latestVersion,
  deployedVersion: fn.deployedVersion,
  isLatestVersion: fn.deployedVersion === fn.latestVersion,
  deployedAt: fn.deployedAt,
  createdAt: fn.createdAt,
  updatedAt: fn.updatedAt,
});
const view = (fn: FunctionRecord & { code: string }) => ({ ...listItem(fn), code: fn.code, settings: fn.settings });

export const functionRoutes: FastifyPluginAsyncTypebox<{ store: Store; sandbox?: SandboxPool }> = async (app, { store, sandbox }) => {
  app.post('/functions', { preValidation: readTerraformFunction, schema: { body: CreateBody, response: { 201: FunctionView, ...errorReplies } } }, async (request, reply) => {
    const body = request.body;
    const kind = kindOf(body.resourceType);
    checkedSettings(body.settings);
    await checkedCode(body.code, kind);
    const input = { resourceType: kind, displayName: body.displayName || DEFAULT_NAMES[kind], description: body.description ?? null, logoUrl: body.logoUrl ?? null, settings: body.settings ?? [], code: body.code };
    const created = await audited(store, request, (tx) => tx.functions.create(input), { target: ({ id }) => id });
    return reply.code(201).send(view(created));
  });

  app.get(
    '/functions',
    { schema: { querystring: Type.Object({ resourceType: Type.Optional(Type.String({ maxLength: 40 })) }), response: { 200: Type.Object({ functions: Type.Array(ListItemView) }), ...errorReplies } } },
    async (request) => {
      const kind = request.query.resourceType === undefined ? undefined : kindOf(request.query.resourceType);
      return { functions: (await store.functions.list(kind)).map(listItem) };
    },
  );

  const found = async (id: string) => {
    const fn = await store.functions.get(id);
    if (!fn) throw notFound(`function ${id}`);
    return fn;
  };

  app.get('/functions/:id', { schema: { params: IdParams, response: { 200: FunctionView, ...errorReplies } } }, async (request) => view(await found(request.params.id)));

  app.patch('/functions/:id', { preValidation: readTerraformFunction, schema: { params: IdParams, body: PatchBody, response: { 200: FunctionView, ...errorReplies } } }, async (request) => {
    const current = await found(request.params.id);
    const body = request.body;
    if (body.resourceType !== undefined && body.resourceType !== current.resourceType) throw badRequest(`resourceType: a function's kind cannot change (it is ${current.resourceType})`);
    checkedSettings(body.settings);
    if (body.code !== undefined) await checkedCode(body.code, current.resourceType);
    const patch = {
      ...(body.code !== undefined && { code: body.code }),
      ...(body.displayName && { displayName: body.displayName }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.logoUrl !== undefined && { logoUrl: body.logoUrl }),
      ...(body.settings !== undefined && { settings: body.settings }),
    };
    const updated = await audited(store, request, (tx) => tx.functions.update(request.params.id, patch), { target: request.params.id });
    if (!updated) throw notFound(`function ${request.params.id}`);
    return view(updated);
  });

  app.delete('/functions/:id', { schema: { params: IdParams, response: { 204: Type.Null(), ...errorReplies } } }, async (request, reply) => {
    if (!(await audited(store, request, (tx) => tx.functions.delete(request.params.id), { target: request.params.id }))) throw notFound(`function ${request.params.id}`);
    return reply.code(204).send(null);
  });

  app.get('/functions/:id/versions', { schema: { params: IdParams, response: { 200: Type.Object({ versions: Type.Array(VersionView) }), ...errorReplies } } }, async (request) => {
    const fn = await found(request.params.id);
    const versions = await store.functions.versions(fn.id);
    return { versions: versions.map((v) => ({ id: String(v.version), version: v.version, code: v.code, isDeployed: v.version === fn.deployedVersion, createdAt: v.createdAt })) };
  });

  app.post(
    '/functions/:id/deploy',
    {
      schema: {
        params: IdParams,
        body: Type.Optional(DeployBody),
        response: { 200: Type.Object({ functionDeployment: Type.Object({ status: Type.Literal('SUCCESS') }), deployedVersion: Type.Integer() }), ...errorReplies },
      },
    },
    async (request) => {
      await found(request.params.id);
      const version = request.body?.version;
      const deployed = await audited(store, request, (tx) => tx.functions.deploy(request.params.id, version), { target: request.params.id });
      if (!deployed) throw badRequest(`version: function ${request.params.id} has no version ${version}`);
      return { functionDeployment: { status: 'SUCCESS' as const }, deployedVersion: deployed.deployedVersion! };
    },
  );

  app.post('/functions/:id/test', { schema: { params: IdParams, body: TestBody, response: { 200: TestView, ...errorReplies } } }, async (request) => {
    const fn = await found(request.params.id);
    const { event, request: sourceRequest, settings = {} } = request.body;
    if (!sandbox) throw new ApiError(503, 'unavailable', 'functions: this process does not run functions');
    let handler: string | undefined;
    let input: unknown;
    if (fn.resourceType === 'SOURCE') {
      if (!sourceRequest) throw badRequest('request: a SOURCE function is tested with a request {headers, body, url?}');
      handler = 'onRequest';
      input = {
        headers: sourceRequest.headers ?? {},
        body: typeof sourceRequest.body === 'string' ? sourceRequest.body : JSON.stringify(sourceRequest.body ?? {}),
        url: sourceRequest.url ?? 'https://switchyard.invalid/functions',
      };
    } else {
      if (!event) throw badRequest(`event: a ${fn.resourceType} function is tested with an event`);
      handler = handlerFor((event as { type?: unknown }).type) ?? `on${String((event as { type?: unknown }).type)}`;
      input = event;
    }
    // A test is a new instance of its own: empty module state and cache, as in Segment's editor.
    const result = await sandbox.run({ sessionKey: `test:${fn.id}:${randomUUID()}`, code: fn.code, handler, input, settings });
    // Its requests were real: the run is in the audit log (field names only, never a value).
    await recordChange(store, request, fn.id);
    const secrets = fn.settings.filter((s) => s.sensitive).map((s) => settings[s.name]);
    const mask = (text: string) => maskSecrets(text, secrets);
    return {
      status: result.status === 'ok' ? ('SUCCESS' as const) : ('ERROR' as const),
      ...(result.status === 'ok' ? { result: fn.resourceType === 'SOURCE' ? { events: result.emitted ?? [] } : result.result } : { error: { type: result.error!.type, message: mask(result.error!.message) } }),
      logs: result.logs.map(mask),
      requests: result.requests.map((r) => ({ method: r.method, url: mask(r.url), status: r.status, durationMs: r.durationMs })),
      durationMs: result.durationMs,
    };
  });
};
