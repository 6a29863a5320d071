import { createServer, type IncomingHttpHeaders } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { verifySignature } from '../src/delivery/signature';

/**
 * `npm run receiver -- [--port 9000] [--secret S] [--signing-secret whsec_…] [--fail 503]`: a local
 * webhook receiver for the quick start. It prints one line per request Switchyard sends — time,
 * type, event or name, messageId, userId, whether the signatures verify, the status it answered and
 * a short excerpt of the body — so a person can watch deliveries (and, with --fail, retries).
 */

const USAGE = `Usage: npm run receiver -- [options]
  --port N             port to listen on (default 9000; 0 picks a free one)
  --host H             address to listen on (default 127.0.0.1)
  --secret S           the destination's sharedSecret: checks X-Signature (HMAC-SHA1 of the body)
  --signing-secret W   the destination's Standard Webhooks secret (whsec_…): checks webhook-signature
  --fail STATUS        answer every request with this status (e.g. 503, to watch Switchyard retry)
  --help`;

const { values: options } = parseArgs({
  options: {
    port: { type: 'string', default: '9000' },
    host: { type: 'string', default: '127.0.0.1' },
    secret: { type: 'string' },
    'signing-secret': { type: 'string' },
    fail: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

function exitWithUsage(problem?: string): never {
  if (problem) console.error(`receiver: ${problem}\n`);
  console.error(USAGE);
  process.exit(problem ? 2 : 0);
}

if (options.help) exitWithUsage();
const port = Number(options.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) exitWithUsage(`--port ${options.port} is not a port number`);
const answer = options.fail === undefined ? 200 : Number(options.fail);
if (!Number.isInteger(answer) || answer < 200 || answer > 599) exitWithUsage(`--fail ${options.fail} is not an HTTP status (200-599)`);
const standardWebhook = options['signing-secret'] ? new Webhook(options['signing-secret']) : undefined;

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** X-Signature as Switchyard signs it (src/delivery/signature.ts, the recipe in docs/api.md). */
function sharedSecretCheck(body: string, headers: IncomingHttpHeaders): string {
  const signature = header(headers, 'x-signature');
  if (!options.secret) return signature ? 'signature not checked (no --secret)' : 'unsigned';
  if (!signature) return 'signature MISSING (no X-Signature header)';
  return verifySignature(options.secret, body, signature) ? 'signature ok' : 'signature FAILED (X-Signature does not match --secret)';
}

/** Standard Webhooks headers, when the destination has a signing secret. */
function standardWebhooksCheck(body: string, headers: IncomingHttpHeaders): string | undefined {
  const signature = header(headers, 'webhook-signature');
  if (!standardWebhook) return signature ? 'standard-webhooks not checked (no --signing-secret)' : undefined;
  if (!signature) return 'standard-webhooks MISSING';
  try {
    standardWebhook.verify(body, {
      'webhook-id': header(headers, 'webhook-id') ?? '',
      'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '',
      'webhook-signature': signature,
    });
    return 'standard-webhooks ok';
  } catch (err) {
    return `standard-webhooks FAILED (${(err as Error).message})`;
  }
}

const EXCERPT_CHARS = 80;
const excerpt = (text: string) => (text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS - 1)}…` : text);

/** What the body is about: its properties or traits when it has them, else the body itself. */
function describeBody(raw: string): { fields: string[]; excerpt: string } {
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    body = parsed as Record<string, unknown>;
  } catch {
    return { fields: ['(not a JSON object)'], excerpt: excerpt(raw) };
  }
  const fields: string[] = [];
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  fields.push(text(body.type ?? '?'));
  const subject = body.event ?? body.name ?? body.groupId;
  if (subject !== undefined) fields.push(JSON.stringify(subject));
  if (body.messageId !== undefined) fields.push(`messageId=${text(body.messageId)}`);
  if (body.userId !== undefined) fields.push(`userId=${text(body.userId)}`);
  const detail = body.properties ?? body.traits ?? body;
  return { fields, excerpt: excerpt(JSON.stringify(detail)) };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const time = new Date().toISOString().slice(11, 23);
    const { fields, excerpt: bodyExcerpt } = describeBody(raw);
    const checks = [sharedSecretCheck(raw, req.headers), standardWebhooksCheck(raw, req.headers)].filter(Boolean);
    res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok\n' : `answered ${answer} (--fail)\n`);
    console.log(`${time}  ${req.method} ${req.url}  ${fields.join('  ')}  ${checks.join(', ')}  → ${answer}  ${bodyExcerpt}`);
  });
});

server.on('error', (err: NodeJS.ErrnoException) => {
  console.error(`receiver: cannot listen on ${options.host}:${port}: ${err.code ?? err.message}`);
  process.exit(1);
});

server.listen(port, options.host, () => {
  const { port: bound } = server.address() as { port: number };
  const checking = [options.secret && 'X-Signature with --secret', standardWebhook && 'Standard Webhooks with --signing-secret'].filter(Boolean).join(' and ');
  console.log(`Receiving webhooks on http://${options.host}:${bound}/ (any path), answering ${answer}${answer === 200 ? '' : ' (--fail)'}; ${checking ? `checking ${checking}` : 'not checking signatures (pass --secret)'}.`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
