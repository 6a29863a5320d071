import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

// `exports` points at the compiled library: build it as a user of the package does (no install hook builds it).
beforeAll(() => {
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
}, 180_000);

it('is importable as `switchyard/client` from plain Node, with type declarations (built by npm run build)', () => {
  const script = "const c = require('switchyard/client'); const a = new c.Analytics({ writeKey: 'k', endpoint: 'http://127.0.0.1:9' }); console.log(JSON.stringify({ exports: Object.keys(c).sort(), pending: a.pending })); a.close();";
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' }));
  expect(out.exports).toEqual(expect.arrayContaining(['Analytics', 'AnalyticsError', 'DEFAULTS', 'MAX_BATCH_BYTES', 'MAX_MESSAGE_BYTES']));
  expect(out.pending).toBe(0);
  expect(existsSync(path.join(ROOT, 'dist/client/index.d.ts'))).toBe(true);
});
