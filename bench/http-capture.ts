import { get } from 'node:http';

/** One response as it came over the wire, minus what Node's HTTP server writes by itself. */
export interface CapturedResponse {
  readonly status: number;
  /** Name, value, name, value, … in the order received (node:http's rawHeaders). */
  readonly headers: readonly string[];
  /** base64 */
  readonly body: string;
}

/** Written by any node:http server itself, the service's and the ceiling's alike; Date differs every second. */
const SERVER_WRITTEN = new Set(['date', 'connection', 'keep-alive']);

/** GETs `url` once; the headers keep their order and case. */
export function capture(url: string, headers: Readonly<Record<string, string>>): Promise<CapturedResponse> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const raw = response.rawHeaders;
        const kept: string[] = [];
        for (let i = 0; i + 1 < raw.length; i += 2) {
          const [name, value] = [raw[i] ?? '', raw[i + 1] ?? ''];
          if (!SERVER_WRITTEN.has(name.toLowerCase())) kept.push(name, value);
        }
        resolve({ status: response.statusCode ?? 0, headers: kept, body: Buffer.concat(chunks).toString('base64') });
      });
    }).on('error', reject);
  });
}
