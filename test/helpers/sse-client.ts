import http from 'node:http';
import { type CallResult, parseJson } from './calls.js';

/** One Server-Sent Events frame: an event (id, event, data) or a comment line. */
export interface SseFrame {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
  /** When it arrived (performance.now()). */
  readonly at: number;
}

/** An open stream, read as it arrives. */
export interface SseStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Every frame so far, comments included, in order. */
  readonly frames: SseFrame[];
  /** The event frames so far. */
  events(): SseFrame[];
  /** Resolves once `count` event frames have arrived; rejects after `timeoutMs`. */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseFrame[]>;
  /** Resolves when the response ends: `end` after its last chunk, `reset` when the connection broke first. */
  readonly closed: Promise<'end' | 'reset'>;
  /** Leaves: destroys the connection. */
  close(): void;
}

function parseFrame(block: string, at: number): SseFrame {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) return { comment: line.slice(1).trim(), at };
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
  }
  return { ...fields, at };
}

/**
 * Opens `GET path` with `Accept: text/event-stream` on a connection of its own. A 200 is an SseStream; any
 * other status is read whole and returned as a CallResult (for expectError).
 */
export function openStream(
  url: string,
  path: string,
  options: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<SseStream | CallResult> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.key !== null && options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  return new Promise((resolve, reject) => {
    const request = http.get(new URL(path, url), { headers, agent: false }, (response) => {
      const status = response.statusCode ?? 0;
      response.setEncoding('utf8');
      if (status !== 200) {
        let text = '';
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          const fetchHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (typeof value === 'string') fetchHeaders.set(name, value);
          }
          resolve({ status, headers: fetchHeaders, text, json: parseJson(text) });
        });
        return;
      }
      const frames: SseFrame[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          frames.push(parseFrame(buffer.slice(0, end), performance.now()));
          buffer = buffer.slice(end + 2);
        }
        for (const waiter of waiters) waiter();
      });
      const closed = new Promise<'end' | 'reset'>((done) => {
        response.on('close', () => done(response.complete ? 'end' : 'reset'));
      });
      // A destroyed connection errors the response; `closed` reports it.
      response.on('error', () => undefined);
      const events = () => frames.filter((frame) => frame.comment === undefined);
      resolve({
        status,
        headers: response.headers,
        frames,
        events,
        closed,
        close: () => request.destroy(),
        waitForEvents(count, timeoutMs = 3000) {
          return new Promise((done, fail) => {
            const check = () => {
              if (events().length < count) return;
              waiters.delete(check);
              clearTimeout(timer);
              done(events());
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`${events().length} of ${count} events within ${timeoutMs} ms`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
      });
    });
    request.on('error', reject);
  });
}

/** The stream, asserting the answer was one. */
export function isStream(result: SseStream | CallResult): result is SseStream {
  return 'frames' in result;
}
