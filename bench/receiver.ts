import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * The bench's webhook receiver, a child process of its own so its CPU is not the load generator's.
 * It answers 200 at once and reports, in batches over IPC, when each messageId arrived (wall clock
 * in ms with sub-ms resolution, comparable across processes on one machine).
 */
const MESSAGE_ID = '"messageId":"';
let pending: [string, number][] = [];
/** TCP connections opened to the receiver so far: shows whether senders keep connections alive. */
let connections = 0;

function messageIdOf(body: string): string {
  const start = body.indexOf(MESSAGE_ID);
  if (start < 0) return '';
  const from = start + MESSAGE_ID.length;
  return body.slice(from, body.indexOf('"', from));
}

const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    pending.push([messageIdOf(body), performance.timeOrigin + performance.now()]);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' }).end('{"ok":true}');
  });
});
server.on('connection', () => connections++);
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;

const flush = setInterval(() => {
  if (pending.length === 0) return;
  const receipts = pending;
  pending = [];
  process.send?.({ receipts, connections });
}, 50);

server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => {
  clearInterval(flush);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
