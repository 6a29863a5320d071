import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig, SETTINGS } from '../../src/config';

/** No Docker engine runs here, so the production description is kept honest by reading it. */
const ROOT = path.resolve(__dirname, '../..');
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { environment?: Record<string, string>; ports?: string[]; command?: string[]; build?: string }>;
};
const known = new Set(Object.values(SETTINGS).map((s) => s.env));
const switchyard = Object.entries(compose.services).filter(([, service]) => service.build);

it('runs the API and the worker from the repo Dockerfile with the real entry points', () => {
  expect(switchyard.map(([name]) => name).sort()).toEqual(['api', 'worker']);
  expect(compose.services.api.command).toEqual(['node', '--import', 'tsx', 'src/server.ts']);
  expect(compose.services.worker.command).toEqual(['node', '--import', 'tsx', 'src/worker.ts']);
  for (const [, service] of switchyard) expect(readFileSync(path.join(ROOT, service.command![3]), 'utf8')).toContain('loadConfig');
});

it('configures Switchyard only through env vars that exist in the config table, with values it accepts', () => {
  for (const [name, service] of switchyard) {
    for (const variable of Object.keys(service.environment ?? {})) {
      expect(`${name}: ${variable} ${known.has(variable) ? 'known' : 'unknown'}`).toBe(`${name}: ${variable} known`);
    }
    const literal = Object.fromEntries(Object.entries(service.environment ?? {}).filter(([, v]) => !String(v).startsWith('${')));
    expect(() => loadConfig(literal)).not.toThrow();
  }
});

it('publishes the API on PORT and the Web UI on the documented port', () => {
  const apiPort = compose.services.api.environment!.PORT;
  expect(compose.services.api.ports).toContain(`${apiPort}:${apiPort}`);
  expect(compose.services['temporal-ui'].ports![0]).toMatch(new RegExp(`^${SETTINGS.temporalUiPort.default}:`));
  expect(compose.services.temporal.ports).toContain(`7233:${SETTINGS.temporalAddress.default.split(':')[1]}`);
});

it('registers the same search attributes as the dev-server script', () => {
  const script = readFileSync(path.join(ROOT, 'scripts/temporal-dev.sh'), 'utf8');
  const fromScript = [...script.matchAll(/--search-attribute (\w+)=(\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
  const setup = JSON.stringify(compose.services['temporal-setup']);
  const fromCompose = [...setup.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
  expect(fromCompose).toEqual(fromScript);
});
