/** What a load generator sends and what it reports, whichever generator it is. */

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
}

export interface LoadGenerator {
  /** Name and version, for the report. */
  readonly label: string;
  run(load: Load, settings: LoadSettings): Promise<LoadResult>;
}

/** A load of one request only: generators can then build it once instead of per request. */
export function fixedRequest(load: Load): RequestTemplate | undefined {
  const [only, ...others] = load.requests;
  return only !== undefined && others.length === 0 && only.request.randomIdUpTo === undefined
    ? only.request
    : undefined;
}

/** The request whose cumulative weight first exceeds `draw` (0 ≤ draw < 1). */
export function pick(load: Load, draw: number): RequestTemplate {
  let cumulative = 0;
  for (const { weight, request } of load.requests) {
    cumulative += weight;
    if (draw < cumulative) return request;
  }
  const last = load.requests.at(-1);
  if (last === undefined) throw new Error('a load needs at least one request');
  return last.request;
}

export const REQUEST_TIMEOUT_SECONDS = 10;
