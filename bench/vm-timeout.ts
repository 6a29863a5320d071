import vm from 'node:vm';

/**
 * What one call into a `vm` context costs with and without a timeout (the Temporal SDK calls into
 * its workflow sandbox with `isolateExecutionTimeout` on every call): `npx tsx bench/vm-timeout.ts`.
 */
const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
const script = new vm.Script('1 + 1');
const CALLS = 20_000;
for (const options of [{}, { timeout: 5_000 }, {}, { timeout: 5_000 }]) {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) script.runInContext(context, options);
  const used = process.cpuUsage(before);
  console.log(`${options.timeout ? `timeout ${options.timeout} ms` : 'no timeout'}: ${((used.user + used.system) / CALLS).toFixed(1)} µs CPU per call`);
}
