import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import {
  fixedRequest,
  type Load,
  type LoadGenerator,
  type LoadSettings,
  loadGenerator,
  pick,
  REQUEST_TIMEOUT_SECONDS,
  type RequestTemplate,
  requestHeaders,
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
    headers: requestHeaders(template, headers),
    ...(template.body === undefined ? {} : { body: template.body }),
  };
}

/**
 * The requests of `load`: one built once when it is fixed, else each drawn when sent, with each kind's
 * latency added to `samples` (a connection has one request in flight; its context remembers it). From when
 * the request is built: a connection's first one also counts its connect.
 */
function requests(load: Load, settings: LoadSettings, samples: number[][]): autocannon.Request[] {
  const fixed = fixedRequest(load);
  if (fixed !== undefined) return [toRequest(fixed, settings.headers)];
  return [
    {
      // Merged into autocannon's own request, which carries the Host header.
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
}

/**
 * autocannon, in this process (used when wrk is not installed). It is slower than wrk, so near the ceiling
 * it may measure itself more than the server.
 */
export function autocannonGenerator(): LoadGenerator {
  return loadGenerator(`autocannon ${version} (in process; latencies in whole ms)`, async (load, settings) => {
    const samples: number[][] = load.requests.map(() => []);
    const result = await autocannon({
      url: settings.origin,
      connections: settings.connections,
      duration: settings.seconds,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: requests(load, settings, samples),
    });
    return {
      requests: result.requests.total,
      seconds: result.duration,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      errorResponses: result['4xx'] + result['5xx'],
      socketErrors: result.errors - result.timeouts,
      timeouts: result.timeouts,
      samples,
    };
  });
}
