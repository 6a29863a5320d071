import { readFileSync } from 'node:fs';
import path from 'node:path';
import { webhookRequestHeaders } from '../../src/delivery/request';
import { USER_AGENT, VERSION } from '../../src/version';

/** One version: package.json, CHANGELOG.md, what `npm start` and /health report, and the User-Agent token. */
const ROOT = path.join(__dirname, '..', '..');

describe('the version', () => {
  it("is package.json's version", () => {
    expect(VERSION).toBe((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it("is CHANGELOG.md's latest release", () => {
    const releases = [...readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8').matchAll(/^## \[(\d+\.\d+\.\d+)\]/gm)].map((match) => match[1]);
    expect(releases[0]).toBe(VERSION);
  });

  it("gives webhooks the seed's `<service_name>/1.0` product token: the name and the version's major.minor", () => {
    const [major, minor] = VERSION.split('.');
    expect(USER_AGENT).toBe(`Switchyard/${major}.${minor}`);
    expect(webhookRequestHeaders({}, null, '{}')['user-agent']).toBe(USER_AGENT);
  });
});
