import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SETTINGS } from '../../src/config';
import { docCommands, docPages } from '../helpers/doc-commands';
import { npmStart, stopNpmStart, type Started } from '../helpers/npm-start';
import { freePort } from '../helpers/ports';
import { ROOT } from '../helpers/processes';

/**
 * The docs' commands work as written, against `npm start` as a user runs it: every `curl` in a fenced
 * block of README.md and docs/*.md names the port `npm start` prints by default, and run in order
 * against a started system (that port swapped for this run's free one, the printed token, write key
 * and source id in the shell's variables, each `src_…`/`dst_…`/`rpl_…` the id an earlier command
 * made) answers what the page promises (`# → 201 …`), or a 2xx. `npm start` also listens on loopback
 * only, unless HOST says otherwise.
 */
const run = promisify(execFile);

let dataDir: string;
let started: Started | undefined;
beforeAll(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-docs-'));
});
afterAll(async () => {
  await stopNpmStart(started);
  rmSync(dataDir, { recursive: true, force: true });
});

/** The local addresses of the sockets listening on `port` (Linux's tables, IPv4 and IPv6). */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const row of text.split('\n').slice(1)) {
      const [, local, , state] = row.trim().split(/\s+/);
      // 0A: LISTEN.
      if (state === '0A' && local?.endsWith(`:${hexPort}`)) found.push(local.split(':')[0]);
    }
  }
  return found;
}

const connects = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: 5_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });

it('listens on 127.0.0.1 only, and every curl in the docs answers what its page says on the port npm start prints', async () => {
  const ports = { api: await freePort(), temporal: await freePort(), ui: await freePort() };
  started = await npmStart(dataDir, ports);
  const { adminToken, writeKey, sourceId, api } = started.banner;

  // Loopback unless HOST says otherwise: one listening socket, on 127.0.0.1 (0100007F in the table).
  expect(listeningAddresses(ports.api)).toEqual(['0100007F']);
  const external = Object.values(os.networkInterfaces()).flat().find((address) => address && !address.internal && address.family === 'IPv4');
  if (external) expect(await connects(external.address, ports.api)).toBe(false);
  expect(await connects('127.0.0.1', ports.api)).toBe(true);

  const commands = docCommands(ROOT, docPages(ROOT));
  // README's quick start, the operational endpoint, the replay and its controls, health and status.
  expect(commands.length).toBeGreaterThanOrEqual(8);
  const printedPort = `localhost:${SETTINGS.port.default}`;
  expect(commands.filter(({ command }) => !command.includes(`${printedPort}/`)).map(({ where }) => `${where} does not use ${printedPort}`)).toEqual([]);

  const ids: Record<string, string> = { src: sourceId };
  const env = { ...process.env, ADMIN_TOKEN: adminToken, WRITE_KEY: writeKey, SOURCE_ID: sourceId };
  const out = path.join(dataDir, 'answer');
  const wrong: string[] = [];
  for (const { where, command, promisedStatuses } of commands) {
    const placeholders = [...command.matchAll(/\b(src|dst|rpl)_…/g)].map((m) => m[1]);
    const missing = placeholders.filter((prefix) => !ids[prefix]);
    if (missing.length > 0) {
      wrong.push(`${where}: no earlier command made a ${missing.join(', ')}_ id`);
      continue;
    }
    const line = command.replaceAll(`http://${printedPort}`, api).replaceAll(printedPort, api).replace(/\b(src|dst|rpl)_…/g, (_, prefix: string) => ids[prefix]);
    const { stdout } = await run('bash', ['-c', `${line} -s -o '${out}' -w '%{http_code}'`], { env, cwd: dataDir, timeout: 60_000 });
    const status = Number(stdout.trim());
    const body = readFileSync(out, 'utf8');
    const ok = promisedStatuses === undefined ? status >= 200 && status < 300 : promisedStatuses.includes(status);
    if (!ok) wrong.push(`${where}: answered ${status} (expected ${promisedStatuses?.join(' or ') ?? '2xx'}): ${body.slice(0, 300)}`);
    // What a later command's placeholder stands for: the id this one made.
    const made = /"id":"((src|dst|rpl)_[^"]+)"/.exec(body);
    if (made) ids[made[2]] ??= made[1];
  }
  expect(wrong).toEqual([]);
}, 360_000);
