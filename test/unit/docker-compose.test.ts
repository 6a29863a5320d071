import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { loadConfig, SETTINGS } from '../../src/config';
import { loadCompose } from '../helpers/compose';

/**
 * No Docker engine runs here, so the production description is kept honest by reading it: valid
 * Compose, configured only through settings Switchyard has, started in a safe order, and (with
 * test/integration/image-steps.test.ts for the Dockerfile) running what the image builds.
 */
const ROOT = path.resolve(__dirname, '../..');

const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = loadCompose(ROOT);
const services = compose.services;
const known = new Set(Object.values(SETTINGS).map((s) => s.env));
const switchyard = Object.entries(services).filter(([, service]) => service.build);
const oneShots = Object.entries(services).filter(([, service]) => service.restart === 'no');
const longRunning = Object.entries(services).filter(([, service]) => service.restart !== 'no');
const pinnedServer = readFileSync(path.join(ROOT, 'scripts/temporal-server.sh'), 'utf8').match(/^pinned="v([\d.]+)"/m)![1];

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification schema', () => {
    // The Compose specification's schema (compose-spec/compose-spec, schema/compose-spec.json) as
    // the dclint devDependency ships it; its version is that package's pinned version.
    const schemaFile = path.join(path.dirname(require.resolve('dclint/package.json')), 'schemas/compose.schema.json');
    const { $schema: draft, ...schema } = JSON.parse(readFileSync(schemaFile, 'utf8'));
    expect(schema.title).toBe('Compose Specification');
    // Draft-07, Ajv's default; the file names it by an https URL Ajv does not register.
    expect(draft).toMatch(/draft-07/);
    // Validated once: Ajv's passes that optimise the generated code would cost more than they save.
    const ajv = new Ajv({ allErrors: true, strict: false, code: { optimize: false } });
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(valid ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toEqual([]);
  });

  it('runs the API and the worker from the repo Dockerfile: the compiled entry points, the API as the image CMD', () => {
    expect(switchyard.map(([name]) => name).sort()).toEqual(['api', 'worker']);
    expect(services.api.command).toEqual(['node', 'dist/server.js']);
    expect(services.worker.command).toEqual(['node', 'dist/worker.js']);
    const cmd = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').match(/^CMD (\[.*\])$/m)![1];
    expect(JSON.parse(cmd)).toEqual(services.api.command);
    for (const [, service] of switchyard) {
      const source = service.command![1].replace(/^dist\//, 'src/').replace(/\.js$/, '.ts');
      expect(readFileSync(path.join(ROOT, source), 'utf8')).toContain('loadConfig');
    }
  });

  it('configures Switchyard only through env vars that exist in the config table, with values it accepts', () => {
    for (const [name, service] of switchyard) {
      for (const variable of Object.keys(service.environment ?? {})) {
        expect(`${name}: ${variable} ${known.has(variable) ? 'known' : 'unknown'}`).toBe(`${name}: ${variable} known`);
      }
      expect(() => loadConfig(service.environment ?? {})).not.toThrow();
    }
  });

  it('has the API and the worker listen on every interface of their container (HOST), so the published port and Prometheus reach them', () => {
    for (const [name, service] of switchyard) expect(`${name}: ${service.environment?.HOST}`).toBe(`${name}: 0.0.0.0`);
  });

  it('gives the API and every worker the PostgreSQL store, so nothing is written on their disks (read-only root)', () => {
    for (const [, service] of switchyard) {
      expect(service.environment!.DATABASE_URL).toMatch(/^postgres:\/\/switchyard:[^@]+@postgresql:5432\/switchyard$/);
      expect(service.environment!.DATA_DIR).toBeUndefined();
      expect(service.read_only).toBe(true);
    }
  });

  it('has a healthcheck and a restart policy on every long-running service; one-shots never restart', () => {
    expect(oneShots.map(([name]) => name).sort()).toEqual(['temporal-namespace', 'temporal-schema']);
    for (const [name, service] of longRunning) {
      expect(`${name}: ${service.healthcheck?.test?.length ? 'healthcheck' : 'none'}`).toBe(`${name}: healthcheck`);
      expect(`${name}: ${service.restart}`).toMatch(/: (unless-stopped|always|on-failure)/);
    }
    // The API's is /health, what a load balancer reads: ready while it can take ingestion (store and Temporal answer).
    expect(services.api.healthcheck!.test.join(' ')).toContain(`127.0.0.1:${services.api.environment!.PORT}/health`);
    expect(services.worker.healthcheck!.test.join(' ')).toContain(`127.0.0.1:${services.worker.environment!.METRICS_PORT}/metrics`);
  });

  it('starts each service only once what it needs is healthy or has finished (depends_on conditions)', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const target = services[dependency];
        expect(`${name} -> ${dependency}: ${condition}`).toBe(`${name} -> ${dependency}: ${target.restart === 'no' ? 'service_completed_successfully' : 'service_healthy'}`);
        if (condition === 'service_healthy') expect(target.healthcheck).toBeDefined();
      }
    }
    expect(Object.keys(services['temporal-schema'].depends_on!)).toEqual(['postgresql']);
    expect(Object.keys(services.temporal.depends_on!)).toEqual(['temporal-schema']);
    expect(Object.keys(services['temporal-namespace'].depends_on!)).toEqual(['temporal']);
    for (const [, service] of switchyard) expect(Object.keys(service.depends_on!).sort()).toEqual(['postgresql', 'temporal-namespace']);
  });

  it('publishes Temporal and its Web UI on 127.0.0.1 only, the API on PORT, and nothing of the worker (so it scales)', () => {
    expect(services.temporal.ports).toEqual([`127.0.0.1:7233:${SETTINGS.temporalAddress.default.split(':')[1]}`]);
    expect(services['temporal-ui'].ports).toEqual([`127.0.0.1:${SETTINGS.temporalUiPort.default}:8080`]);
    const apiPort = services.api.environment!.PORT;
    expect(services.api.ports).toEqual([`${apiPort}:${apiPort}`]);
    expect(services.worker.ports).toBeUndefined();
    expect(services.worker.container_name).toBeUndefined();
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) if (name !== 'api') expect(`${name}: ${port}`).toMatch(/: 127\.0\.0\.1:/);
    }
  });

  it('runs Temporal server and admin-tools images of the version scripts/temporal-server.sh builds, never auto-setup', () => {
    expect(services.temporal.image).toBe(`temporalio/server:${pinnedServer}`);
    expect(services['temporal-schema'].image).toBe(`temporalio/admin-tools:${pinnedServer}`);
    expect(services['temporal-namespace'].image).toBe(`temporalio/admin-tools:${pinnedServer}`);
    expect(text).not.toContain('auto-setup');
    for (const [name, service] of Object.entries(services)) if (!service.build) expect(`${name}: ${service.image}`).toMatch(/:[\w.-]*\d[\w.-]*$/);
  });

  it('sets up both Temporal databases with temporal-sql-tool (postgres12, v12 schema directories)', () => {
    const script = services['temporal-schema'].command!.join('\n');
    expect(script).toContain('temporal-sql-tool --plugin postgres12');
    for (const step of ['create-database', 'setup-schema -v 0.0', 'update-schema -d']) expect(script).toContain(step);
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/$schema/versioned');
    expect(script).toMatch(/for db in temporal temporal_visibility/);
  });

  it('mounts only files that exist in the repository', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0];
        if (source.startsWith('./')) expect(`${name}: ${source} ${existsSync(path.join(ROOT, source)) ? 'exists' : 'missing'}`).toBe(`${name}: ${source} exists`);
      }
    }
  });

  it('registers the same search attributes as the real-server and dev-server scripts', () => {
    const serverScript = readFileSync(path.join(ROOT, 'scripts/temporal-server.sh'), 'utf8');
    const block = serverScript.match(/^search_attributes=\(([^)]*)\)/m)![1];
    const fromServerScript = [...block.matchAll(/(\w+)=(\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    const devScript = readFileSync(path.join(ROOT, 'scripts/temporal-dev.sh'), 'utf8');
    const fromDevScript = [...devScript.matchAll(/--search-attribute (\w+)=(\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    const setup = services['temporal-namespace'].command!.join('\n');
    const fromCompose = [...setup.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    expect(fromCompose.length).toBeGreaterThan(0);
    expect(fromCompose).toEqual(fromServerScript);
    expect(fromCompose).toEqual(fromDevScript);
    // Ready only once the frontend accepts a query naming each of them (its namespace cache has them).
    const names = fromCompose.map((entry) => entry.split('=')[0]).sort();
    const readiness = (text: string) => [...(text.match(/workflow list[^\n]*--query[^\n]*/)?.[0] ?? '').matchAll(/(Switchyard\w+) = /g)].map((m) => m[1]).sort();
    expect(readiness(setup)).toEqual(names);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('runs as the non-root user node, with a node-based HEALTHCHECK on /health (no curl in slim images)', () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*CMD \["node", "-e", ".*\/health/m);
  });

  it('listens on every interface in the image (HOST=0.0.0.0), where outside a container the default is loopback', () => {
    expect(runtime).toMatch(/^ENV HOST=0\.0\.0\.0$/m);
    expect(SETTINGS.host.default).toBe('127.0.0.1');
  });

  it('gives the SQLite store (no DATABASE_URL) a DATA_DIR volume the node user owns', () => {
    expect(runtime).toMatch(/^ENV DATA_DIR=\/data$/m);
    expect(runtime).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(runtime).toMatch(/chown node:node \/data/);
  });
});
