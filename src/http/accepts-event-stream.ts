const EVENT_STREAM = 'text/event-stream';
/** What a JSON answer satisfies: the ranges `application/json` falls under. */
const JSON_RANGES = new Set(['application/json', 'application/*', '*/*']);

/**
 * Whether an Accept header asks for Server-Sent Events rather than JSON: `text/event-stream` named, with a
 * quality above 0 and no lower than JSON's. EventSource sends exactly `text/event-stream`; a client that
 * lists both at the same quality named the stream on purpose, so it gets it. A wildcard alone means JSON.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let stream = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [mediaType = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!(quality >= 0 && quality <= 1)) continue;
    if (mediaType === EVENT_STREAM) stream = Math.max(stream, quality);
    else if (JSON_RANGES.has(mediaType)) json = Math.max(json, quality);
  }
  return stream > 0 && stream >= json;
}
