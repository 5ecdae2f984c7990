import { createHmac, timingSafeEqual } from 'node:crypto';

/** Where the next page starts, and the filter the cursor was issued for. */
export interface CursorPosition {
  readonly afterId: number;
  readonly filter: string;
}

const MAC_BYTES = 16;

/**
 * Opaque, tamper-evident page cursors: `base64url(afterId:filter).base64url(hmac)`.
 * The HMAC covers the resource name too, so a cursor for one list is refused by another.
 * A cursor carries only a position; it grants nothing by itself.
 */
export class CursorCodec {
  readonly #secret: Buffer;
  readonly #resource: string;

  constructor(secret: Buffer, resource: string) {
    this.#secret = secret;
    this.#resource = resource;
  }

  encode(position: CursorPosition): string {
    return this.seal(`${position.afterId}:${position.filter}`);
  }

  /** The position, or undefined when the text is not a cursor this service issued for this resource. */
  decode(text: string): CursorPosition | undefined {
    const payload = this.open(text);
    if (payload === undefined) return undefined;
    const match = /^(\d{1,16}):(.*)$/s.exec(payload);
    if (match === null) return undefined;
    const afterId = Number(match[1]);
    if (!Number.isSafeInteger(afterId)) return undefined;
    return { afterId, filter: match[2] ?? '' };
  }

  /** Any payload, signed: what encode does for a page position. */
  seal(payload: string): string {
    return `${Buffer.from(payload).toString('base64url')}.${this.#mac(payload).toString('base64url')}`;
  }

  /** The payload of a sealed text, or undefined when this service did not seal it for this resource. */
  open(text: string): string | undefined {
    const [encodedPayload, encodedMac, ...rest] = text.split('.');
    if (encodedPayload === undefined || encodedMac === undefined || rest.length > 0) return undefined;
    const payloadBytes = Buffer.from(encodedPayload, 'base64url');
    const mac = Buffer.from(encodedMac, 'base64url');
    // Only the canonical encoding is accepted, so every altered character is refused.
    if (payloadBytes.toString('base64url') !== encodedPayload || mac.toString('base64url') !== encodedMac) {
      return undefined;
    }
    const payload = payloadBytes.toString();
    if (mac.length !== MAC_BYTES || !timingSafeEqual(mac, this.#mac(payload))) return undefined;
    return payload;
  }

  #mac(payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(`${this.#resource}\n${payload}`).digest().subarray(0, MAC_BYTES);
  }
}
