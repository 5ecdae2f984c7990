import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import {
  fixedRequest,
  type Load,
  type LoadGenerator,
  type LoadResult,
  type LoadSettings,
  pick,
  REQUEST_TIMEOUT_SECONDS,
  type RequestTemplate,
} from './load.js';

const { version } = createRequire(import.meta.url)('autocannon/package.json') as { version: string };

function toRequest(template: RequestTemplate, headers: Readonly<Record<string, string>>): autocannon.Request {
  const path =
    template.randomIdUpTo === undefined
      ? template.path
      : `${template.path}${1 + Math.floor(Math.random() * template.randomIdUpTo)}`;
  return {
    method: template.method,
    path,
    headers: template.body === undefined ? { ...headers } : { ...headers, 'content-type': 'application/json' },
    ...(template.body === undefined ? {} : { body: template.body }),
  };
}

/**
 * autocannon, in this process (used when wrk is not installed). It is slower than wrk, so near the ceiling
 * it may measure itself more than the server.
 */
export function autocannonGenerator(): LoadGenerator {
  return {
    label: `autocannon ${version} (in process; latencies in whole ms)`,
    async run(load: Load, settings: LoadSettings): Promise<LoadResult> {
      const fixed = fixedRequest(load);
      const requests: autocannon.Request[] =
        fixed !== undefined
          ? [toRequest(fixed, settings.headers)]
          : // Merged into autocannon's own request, which carries the Host header.
            [
              {
                setupRequest: (request) => ({ ...request, ...toRequest(pick(load, Math.random()), settings.headers) }),
              },
            ];
      const result = await autocannon({
        url: settings.origin,
        connections: settings.connections,
        duration: settings.seconds,
        timeout: REQUEST_TIMEOUT_SECONDS,
        requests,
      });
      return {
        requests: result.requests.total,
        seconds: result.duration,
        requestsPerSecond: result.requests.total / result.duration,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errorResponses: result['4xx'] + result['5xx'],
        socketErrors: result.errors - result.timeouts,
        timeouts: result.timeouts,
      };
    },
  };
}
