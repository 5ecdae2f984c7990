import { parseJson } from '../helpers/calls.js';
import { rawBytes, rawExchange } from './raw-http-client.js';
import type { Counter, HostileRequest, HostileResponse } from './requests.js';

/** Sends a generated request with fetch, or over a raw socket when it asks for one or fetch refuses it. */
export async function send(url: string, request: HostileRequest, counter: Counter): Promise<HostileResponse> {
  counter.generated++;
  counter.total++;
  const port = Number(new URL(url).port);
  if (request.raw) return rawExchange(port, rawBytes(request), request.protocolValid);
  const headers = new Headers();
  try {
    for (const [name, value] of request.headers) headers.append(name, value);
  } catch {
    // fetch refuses this header: the raw socket sends it as it is.
    return rawExchange(port, rawBytes(request), request.protocolValid);
  }
  try {
    const response = await fetch(url + request.target, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      text,
      json: parseJson(text),
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    // undici refuses some header values itself (UND_ERR_INVALID_ARG): the raw socket sends them.
    if ((error as Error).message === 'fetch failed' && cause?.code !== 'UND_ERR_INVALID_ARG') {
      return {
        status: undefined,
        contentType: undefined,
        text: '',
        json: undefined,
        why: cause?.code ?? cause?.message,
      };
    }
    return rawExchange(port, rawBytes(request), request.protocolValid);
  }
}
