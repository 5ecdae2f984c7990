/** Of a receiver's answer, the first this many bytes are kept in the deliveries log. */
export const KEPT_BODY_BYTES = 4096;

/** What the deliveries log keeps of a receiver's answer body. */
export interface ResponseBody {
  /** Its first KEPT_BODY_BYTES as text, or `<N bytes, not text>` when those are not text. */
  readonly text: string;
  /** It was longer than what was kept. */
  readonly truncated: boolean;
}

/**
 * What is kept of the bytes read of an answer (at most KEPT_BODY_BYTES + 1: the one more tells it was
 * longer); undefined for an empty one. Text is valid UTF-8 without NUL bytes, a character cut at the cap
 * aside (it is dropped); anything else is described by its size only (docs/decisions/delivery-answers.md).
 */
export function responseBody(read: Buffer): ResponseBody | undefined {
  if (read.length === 0) return undefined;
  const truncated = read.length > KEPT_BODY_BYTES;
  const kept = read.subarray(0, KEPT_BODY_BYTES);
  return { text: decodedText(kept, truncated) ?? `<${kept.length} bytes, not text>`, truncated };
}

/** The bytes as UTF-8 text; undefined when they are not. `cut`: a last character left incomplete is dropped. */
function decodedText(bytes: Buffer, cut: boolean): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    // Streaming, the decoder holds back an incomplete last character instead of refusing it.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes, { stream: cut });
  } catch {
    return undefined;
  }
}
