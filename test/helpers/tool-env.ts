/**
 * The test's environment for a tool it runs that runs no line of src/ (tsc, dependency-cruiser, npm,
 * dev/pack-client.ts), less NODE_V8_COVERAGE: under `npm test` c8 collects V8 coverage from every process
 * that inherits it, which only slows these and c8's report.
 */
export function toolEnv(): NodeJS.ProcessEnv {
  const { NODE_V8_COVERAGE: _, ...env } = process.env;
  return env;
}
