import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { formatReport, type ImportReport } from './segment/import-report';

/**
 * `npm run import -- segment <path> [--apply] [--secrets <file>] [--json]`: reads a Segment export
 * (a directory of Terraform provider files or Public API JSON, or one such file) and sends it to a
 * running Switchyard's POST /admin/imports at SWITCHYARD_URL with ADMIN_TOKEN. A dry run unless
 * --apply. Exits 0 once the report is printed (what cannot move is in it), 1 on an error.
 */
const USAGE = 'usage: npm run import -- segment <path to the export> [--apply] [--secrets <file.json>] [--json]';

function exportFiles(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(tf|json)$/.test(entry.name)) files[path.relative(root, full)] = readFileSync(full, 'utf8');
    }
  };
  if (statSync(root).isDirectory()) walk(root);
  else files[path.basename(root)] = readFileSync(root, 'utf8');
  return files;
}

async function main(args: string[]): Promise<number> {
  const [what, target, ...rest] = args;
  if (what !== 'segment' || !target) {
    console.error(USAGE);
    return 1;
  }
  const apply = rest.includes('--apply');
  const json = rest.includes('--json');
  const at = rest.indexOf('--secrets');
  const secretsFile = at >= 0 ? rest[at + 1] : undefined;
  if (at >= 0 && !secretsFile) {
    console.error(`--secrets: needs a file. ${USAGE}`);
    return 1;
  }
  const unknown = rest.filter((arg, i) => !['--apply', '--json', '--secrets'].includes(arg) && !(at >= 0 && i === at + 1));
  if (unknown.length > 0) {
    console.error(`${unknown[0]}: not an option. ${USAGE}`);
    return 1;
  }
  const url = (process.env.SWITCHYARD_URL ?? 'http://localhost:8080').replace(/\/$/, '');
  const token = process.env.ADMIN_TOKEN;
  if (!token) {
    console.error('ADMIN_TOKEN: is required (a token with destinations:write; npm start prints one)');
    return 1;
  }
  const secrets = secretsFile ? (JSON.parse(readFileSync(secretsFile, 'utf8')) as unknown) : undefined;
  const answer = await fetch(`${url}/admin/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ files: exportFiles(target), apply, ...(secrets !== undefined && { secrets }) }),
  });
  const body = (await answer.json()) as ImportReport & { message?: string };
  if (!answer.ok) {
    console.error(`Switchyard answered ${answer.status}: ${body.message ?? JSON.stringify(body)}`);
    return 1;
  }
  console.log(json ? JSON.stringify(body, null, 2) : formatReport(body));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
