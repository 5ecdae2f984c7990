import { parseJson } from '../helpers/calls.js';
import type { HostileResponse } from './requests.js';

/** Reads an HTTP/1.1 response off the bytes of a raw socket: status line, headers, a chunked or sized body. */
export function parseRawResponse(data: Buffer): HostileResponse {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return { status: undefined, contentType: undefined, text: '', json: undefined, why: 'closed' };
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = data.subarray(end + 4);
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (lineEnd < 0 || !(size > 0)) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else if (headers.has('content-length')) {
    body = body.subarray(0, Number(headers.get('content-length')));
  }
  const text = body.toString('utf8');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  return {
    status: status === undefined ? undefined : Number(status),
    contentType: headers.get('content-type'),
    text,
    json: parseJson(text),
    replayed: headers.get('idempotent-replayed') === 'true',
  };
}
