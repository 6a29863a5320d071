import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** PEM files a test made with the openssl CLI: a CA and certificates it signed. */
export interface TestPki {
  /** The CA that signed the server and client certificates. */
  caCert: string;
  /** The server's certificate (SAN 127.0.0.1 and localhost) and key. */
  serverCert: string;
  serverKey: string;
  /** A client certificate (CN switchyard-test-client) and key for mutual TLS. */
  clientCert: string;
  clientKey: string;
  /** Another CA, which signed none of these: the wrong one to trust. */
  otherCaCert: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.pem`);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  return { cert, key };
}

function makeLeaf(dir: string, name: string, ca: { cert: string; key: string }, extensions: string): { cert: string; key: string } {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const cert = path.join(dir, `${name}.pem`);
  const ext = path.join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${name}`], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext], dir);
  return { cert, key };
}

/** Generates a fresh CA, server and client certificates (and an unrelated CA) into `dir`. */
export function generateTestPki(dir: string): TestPki {
  mkdirSync(dir, { recursive: true });
  const ca = makeCa(dir, 'test-ca');
  const other = makeCa(dir, 'other-ca');
  const server = makeLeaf(dir, 'server', ca, 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const client = makeLeaf(dir, 'switchyard-test-client', ca, 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  return { caCert: ca.cert, serverCert: server.cert, serverKey: server.key, clientCert: client.cert, clientKey: client.key, otherCaCert: other.cert };
}
