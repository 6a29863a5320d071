import { isIP } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Keyring } from '../privacy/keyring';
import { EncryptionCodec, PayloadDecryptionError } from '../privacy/payload-codec';
import { SealedBodyError } from '../privacy/sealed-body';
import { openSealedIn } from '../privacy/open-sealed';
import type { Store } from '../store/types';
import type { Authorize } from './access/authorize';
import { recordPayloadRead } from './access/audit-trail';
import { ApiError } from './errors';

/**
 * Temporal's remote codec protocol (the Web UI's and the `temporal` CLI's `--codec-endpoint`):
 * `POST <prefix>/decode` and `<prefix>/encode` take and answer proto3-JSON Payloads, `{payloads:
 * [{metadata: {key: base64}, data: base64}]}`. Only the last path segment counts, so an endpoint
 * such as `/codec/default` (one per namespace) works too; `X-Namespace` is accepted and ignored
 * (one keyring serves the whole Temporal namespace Switchyard writes to).
 *
 * It answers with decrypted user data, so it wants a token with the `payloads:read` scope (or the
 * bootstrap ADMIN_TOKEN) as `Authorization: Bearer` (the CLI's `--codec-auth 'Bearer …'`). The one exception is `npm start`'s local setup
 * (`openToLoopback`): a request without Authorization is answered when it comes over a loopback
 * socket with no proxy header (a reverse proxy on the same machine connects over loopback too, and
 * would otherwise open this to whoever reaches the proxy) and, if a browser sent it, from an origin
 * of CODEC_CORS_ORIGINS (the dev server's own Web UI, which cannot pass a token). CORS itself is in
 * ./cors.ts.
 */
export interface CodecOptions {
  /** Undefined with PAYLOAD_ENCRYPTION=off: payloads pass through both ways. */
  keyring: Keyring | undefined;
  /** Opens sealed bodies in decoded payloads, or shows `[erased]` (crypto-shredding). */
  dataKeys: Pick<Store['dataKeys'], 'get'>;
  /** The access check shared with the admin API and the portal: a token with payloads:read (route-access.ts). */
  authorize: Authorize;
  /** CODEC_CORS_ORIGINS: the only browser origins answered (also without a token, when open to loopback). */
  corsOrigins: string[];
  /** Only `npm start`: answer tokenless requests from this machine (see above). */
  openToLoopback?: boolean;
  /** Where a decode is recorded (reads of payloads are audited, a row a minute per token). */
  audit?: Pick<Store['audit'], 'append'>;
}

const Base64 = Type.String({ pattern: '^[A-Za-z0-9+/_-]*={0,2}$', maxLength: 16 * 1024 * 1024 });
const JsonPayload = Type.Object({ metadata: Type.Optional(Type.Record(Type.String(), Base64)), data: Type.Optional(Base64) }, { additionalProperties: true });
const JsonPayloads = Type.Object({ payloads: Type.Array(JsonPayload, { maxItems: 10_000 }) }, { additionalProperties: true });
type JsonPayloads = Static<typeof JsonPayloads>;

const fromJson = ({ payloads }: JsonPayloads): Payload[] =>
  payloads.map(({ metadata, data }) => ({
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(data ?? '', 'base64'),
  }));

const toJson = (payloads: Payload[]): JsonPayloads => ({
  payloads: payloads.map(({ metadata, data }) => ({
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value ?? []).toString('base64')])),
    data: Buffer.from(data ?? []).toString('base64'),
  })),
});

const JSON_ENCODING = 'json/plain';

/**
 * The second layer (crypto-shredding): a decoded JSON payload holding sealed bodies comes back
 * with them opened under their subjects' keys, or `"[erased]"` where a regulation destroyed the
 * key: a visible value in the UI, never an error. Encode never seals: the UI and CLI do not write
 * delivery inputs.
 */
async function openSealedBodies(dataKeys: Pick<Store['dataKeys'], 'get'>, payload: Payload): Promise<Payload> {
  if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== JSON_ENCODING) return payload;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload.data ?? []).toString('utf8'));
  } catch {
    return payload;
  }
  const opened = await openSealedIn(dataKeys, value);
  return opened.changed ? { ...payload, data: Buffer.from(JSON.stringify(opened.value), 'utf8') } : payload;
}

const passThrough: PayloadCodec = { encode: async (payloads) => payloads, decode: async (payloads) => payloads };

// A UI page of history can hold many payloads of up to Temporal's 2 MB blob limit each.
const BODY_LIMIT = 32 * 1024 * 1024;

const isLoopback = (address: string | undefined) => {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIP(plain) === 4 ? plain.startsWith('127.') : plain === '::1';
};

/** Headers a proxy adds to say whom it forwards for: a request carrying one came from elsewhere. */
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'];
const isForwarded = (request: FastifyRequest) => PROXY_HEADERS.some((name) => request.headers[name] !== undefined);

export const codecRoutes: FastifyPluginAsync<CodecOptions> = async (app, { keyring, dataKeys, authorize, corsOrigins, openToLoopback, audit }) => {
  const codec = keyring ? new EncryptionCodec(keyring) : passThrough;
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !corsOrigins.includes(origin)) throw new ApiError(403, 'forbidden', 'Origin: this origin is not in CODEC_CORS_ORIGINS');
    // The socket's own address, never X-Forwarded-For, and no proxy's word that it forwards someone else.
    if (openToLoopback && request.headers.authorization === undefined && isLoopback(request.socket.remoteAddress) && !isForwarded(request)) return;
    await authorize(request);
  });

  app.post<{ Params: { '*': string }; Body: JsonPayloads }>(
    '/*',
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        summary: 'Temporal remote codec: decode (decrypt) or encode (encrypt) payloads; the last path segment says which',
        tags: ['codec'],
        security: [{ adminToken: [] }],
        body: JsonPayloads,
        response: { 200: JsonPayloads },
      },
    },
    async (request) => {
      const action = request.params['*'].split('/').pop();
      if (action !== 'decode' && action !== 'encode') throw new ApiError(404, 'not_found', 'codec: the path must end in /decode or /encode');
      try {
        const payloads = await codec[action](fromJson(request.body));
        if (action === 'encode') return toJson(payloads);
        const opened = await Promise.all(payloads.map((p) => openSealedBodies(dataKeys, p)));
        if (audit) await recordPayloadRead(audit, request, 'payload.decode', null);
        return toJson(opened);
      } catch (err) {
        // Names the key id only; the payload itself is never echoed or logged.
        if (err instanceof PayloadDecryptionError || err instanceof SealedBodyError) throw new ApiError(400, 'undecodable_payload', err.message);
        throw err;
      }
    },
  );
};
