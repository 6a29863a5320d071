import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local OAuth2 token endpoint (client credentials) for outbound-auth tests: counts fetches, hands out `token-1`, `token-2`, … */
export interface TokenEndpoint {
  url: string;
  /** The form bodies of the token requests it got, parsed. */
  requests: URLSearchParams[];
  /** The last token handed out. */
  current(): string | undefined;
  close(): Promise<void>;
}

export function startTokenEndpoint(expiresIn = 3600): Promise<TokenEndpoint> {
  const requests: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `token-${requests.length}`, token_type: 'Bearer', expires_in: expiresIn }));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/oauth/token`,
        requests,
        current: () => (requests.length > 0 ? `token-${requests.length}` : undefined),
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
