import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import {
  fixedRequest,
  type Load,
  type LoadGenerator,
  type LoadResult,
  type LoadSettings,
  latencyByRequest,
  pick,
  REQUEST_TIMEOUT_SECONDS,
  type RequestTemplate,
} from './load.js';

const { version } = createRequire(import.meta.url)('autocannon/package.json') as { version: string };

/** What a connection remembers of the request it sent last. */
interface Sent {
  kind: number;
  sentAt: number;
}

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
      // Each kind of request timed apart (a connection has one request in flight; its context remembers it).
      // From when the request is built: a connection's first one also counts its connect.
      const samples: number[][] = load.requests.map(() => []);
      const requests: autocannon.Request[] =
        fixed !== undefined
          ? [toRequest(fixed, settings.headers)]
          : // Merged into autocannon's own request, which carries the Host header.
            [
              {
                setupRequest: (request, context) => {
                  const sent = context as Sent;
                  sent.kind = pick(load, Math.random());
                  sent.sentAt = performance.now();
                  const template = load.requests[sent.kind]?.request as RequestTemplate;
                  return { ...request, ...toRequest(template, settings.headers) };
                },
                onResponse: (_status, _body, context) => {
                  const sent = context as Sent;
                  samples[sent.kind]?.push(performance.now() - sent.sentAt);
                },
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
        ...(load.requests.length > 1 ? { byRequest: latencyByRequest(load, samples) } : {}),
      };
    },
  };
}
