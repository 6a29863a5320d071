import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** Left unanswered on purpose (a `hang` reply): the sender never heard it arrive. */
  hung?: true;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer: the connection stays open until the sender gives up (or the receiver closes). */
  hang?: boolean;
}

/** Decides the reply to the n-th request (0-based); default 200. */
export type Responder = (request: ReceivedRequest, n: number) => Reply;

/** A real webhook receiver on 127.0.0.1 that records every request it gets. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  respond(responder: Responder): void;
  /** The responder in use, to put back after a temporary one. */
  responder(): Responder;
  /** Resolves when at least `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Resolves with the first request whose JSON body has this messageId. */
  waitForMessage(messageId: string, timeoutMs?: number): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

function serve(server: http.Server | https.Server, scheme: 'http' | 'https'): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let responder: Responder = () => ({ status: 200 });
  const waiters: (() => void)[] = [];
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const n = requests.length;
      requests.push(received);
      waiters.splice(0).forEach((wake) => wake());
      const reply = responder(received, n);
      if (reply.hang) {
        received.hung = true;
        return;
      }
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers).end(JSON.stringify({ ok: reply.status < 300 }));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `${scheme}://127.0.0.1:${port}/hook`,
        requests,
        respond: (r) => void (responder = r),
        responder: () => responder,
        async waitForRequests(count, timeoutMs = 30_000) {
          const until = Date.now() + timeoutMs;
          while (requests.length < count) {
            if (Date.now() > until) throw new Error(`expected ${count} requests at ${scheme}://127.0.0.1:${port}, got ${requests.length}`);
            await new Promise<void>((wake) => {
              waiters.push(wake);
              setTimeout(wake, 200);
            });
          }
          return requests;
        },
        async waitForMessage(messageId, timeoutMs = 30_000) {
          const until = Date.now() + timeoutMs;
          for (;;) {
            const found = requests.find((r) => (JSON.parse(r.body) as { messageId?: string }).messageId === messageId);
            if (found) return found;
            if (Date.now() > until) throw new Error(`message ${messageId} did not reach ${scheme}://127.0.0.1:${port}`);
            await new Promise<void>((wake) => {
              waiters.push(wake);
              setTimeout(wake, 200);
            });
          }
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

export const startReceiver = (responder?: Responder) =>
  serve(http.createServer(), 'http').then((r) => {
    if (responder) r.respond(responder);
    return r;
  });

/** An HTTPS receiver whose certificate is self-signed for 127.0.0.1. */
export async function startSelfSignedReceiver(): Promise<Receiver> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], { keyType: 'ec', curve: 'P-256', notAfterDate: new Date(Date.now() + 86_400_000), extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }] });
  return serve(https.createServer({ key: pems.private, cert: pems.cert }), 'https');
}
