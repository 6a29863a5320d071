/** CPU µs per call of `step`, after a warm-up of a tenth as many (JIT): the parts benches (codec-cost, data-control-cost). */
export async function cpuMicros(iterations: number, step: () => unknown): Promise<number> {
  for (let i = 0; i < iterations / 10; i++) await step();
  const before = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await step();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / iterations;
}
