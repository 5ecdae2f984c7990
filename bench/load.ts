/** What a load generator sends and what it reports, whichever generator it is. */
import { percentile } from './percentile.js';

export interface RequestTemplate {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** When set, every request appends a random id from 1 to this to `path`. */
  readonly randomIdUpTo?: number;
  /** A JSON body (sent with Content-Type: application/json). */
  readonly body?: string;
}

/** Each request is drawn from `requests` by weight (the weights sum to 1). */
export interface Load {
  readonly requests: readonly { readonly weight: number; readonly request: RequestTemplate }[];
}

export interface LoadSettings {
  /** e.g. http://127.0.0.1:1234 */
  readonly origin: string;
  /** Sent with every request (Authorization). */
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly seconds: number;
}

/** The latency of one kind of request in a load of several (the mix: reads and writes apart). */
interface RequestLatency {
  /** e.g. `GET /v1/pets?limit=20` */
  readonly request: string;
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Responses with a status of 400 or more (wrk counts 3xx as success, so autocannon's 3xx are left out too). */
  readonly errorResponses: number;
  /** Connections that failed: refused, reset, unreadable. */
  readonly socketErrors: number;
  readonly timeouts: number;
  /** For a load of more than one kind of request: each kind's latency, in the order of Load.requests. */
  readonly byRequest?: readonly RequestLatency[];
}

export interface LoadGenerator {
  /** Name and version, for the report. */
  readonly label: string;
  run(load: Load, settings: LoadSettings): Promise<LoadResult>;
}

/** What a generator measured of one run, in its own way; loadGenerator() makes the LoadResult of it. */
export interface Measurement extends Omit<LoadResult, 'requestsPerSecond' | 'byRequest'> {
  /** When the load times its kinds apart (timedApart): `samples[i]`, in ms, for `load.requests[i]`. */
  readonly samples?: readonly number[][];
}

/** A generator: its label and how it drives one run; the result is made the same for every generator. */
export function loadGenerator(
  label: string,
  drive: (load: Load, settings: LoadSettings) => Promise<Measurement>,
): LoadGenerator {
  return {
    label,
    async run(load, settings) {
      const { samples, requests, seconds, ...latencyAndErrors } = await drive(load, settings);
      return {
        requests,
        seconds,
        requestsPerSecond: requests / seconds,
        ...latencyAndErrors,
        ...(timedApart(load) ? { byRequest: latencyByRequest(load, samples ?? []) } : {}),
      };
    },
  };
}

/** A load of several kinds of request (the mix) times each kind apart: reads and writes. */
export function timedApart(load: Load): boolean {
  return load.requests.length > 1;
}

/** The headers of a request: `headers`, and the JSON content type when it has a body. */
export function requestHeaders(
  request: RequestTemplate,
  headers: Readonly<Record<string, string>>,
): Record<string, string> {
  return request.body === undefined ? { ...headers } : { ...headers, 'Content-Type': 'application/json' };
}

/** A load of one request only: generators can then build it once instead of per request. */
export function fixedRequest(load: Load): RequestTemplate | undefined {
  const [only, ...others] = load.requests;
  return only !== undefined && others.length === 0 && only.request.randomIdUpTo === undefined
    ? only.request
    : undefined;
}

/** The index of the request whose cumulative weight first exceeds `draw` (0 ≤ draw < 1). */
export function pick(load: Load, draw: number): number {
  if (load.requests.length === 0) throw new Error('a load needs at least one request');
  let cumulative = 0;
  for (const [i, { weight }] of load.requests.entries()) {
    cumulative += weight;
    if (draw < cumulative) return i;
  }
  return load.requests.length - 1;
}

export const REQUEST_TIMEOUT_SECONDS = 10;

/** Each kind's latency from its samples (ms), `samples[i]` for `load.requests[i]`. */
function latencyByRequest(load: Load, samples: readonly number[][]): RequestLatency[] {
  return load.requests.map(({ request }, i) => {
    const sorted = [...(samples[i] ?? [])].sort((a, b) => a - b);
    return {
      request: `${request.method} ${request.path}${request.randomIdUpTo === undefined ? '' : '{id}'}`,
      count: sorted.length,
      p50Ms: percentile(sorted, 50) ?? Number.NaN,
      p99Ms: percentile(sorted, 99) ?? Number.NaN,
    };
  });
}
