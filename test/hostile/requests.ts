import fc from 'fast-check';

/** A generated request as it goes on the wire, the answer it got, and how to describe both in a failure. */

export interface HostileRequest {
  readonly method: string;
  /** The request-target exactly as it goes on the wire. */
  readonly target: string;
  /** Header lines in order; a name may repeat. Values are latin1 (one char per byte). */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body?: Buffer;
  /** Sent over a raw socket: fetch would refuse or rewrite it. */
  readonly raw: boolean;
  /** False when Node's HTTP parser may refuse it before the app sees it (400/431 or a closed connection). */
  readonly protocolValid: boolean;
  /** The status the decision records (docs/decisions.md) promise for it, when the generator knows. */
  readonly expect?: number;
  /** Sent without the Host and Connection headers the raw transport adds otherwise. */
  readonly noHost?: boolean;
  /** A request without Host: the app answers it (see its own test in raw-http.test.ts). */
  readonly nodeAnswers?: boolean;
}

export interface HostileResponse {
  /** Undefined: the connection closed without a response. */
  readonly status: number | undefined;
  readonly contentType: string | undefined;
  readonly text: string;
  readonly json: any;
  /** `Idempotent-Replayed: true`: the stored answer to an earlier request, which changes nothing. */
  readonly replayed?: boolean;
  readonly why?: string | undefined;
}

export function clip(text: string, max = 160): string {
  const printable = JSON.stringify(text);
  return printable.length <= max ? printable : `${printable.slice(0, max)}…(${text.length} chars)`;
}

export function summary(request: HostileRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${clip(value, 90)}`).join(' | ');
  const body =
    request.body === undefined ? '' : ` body(${request.body.length} B)=${clip(request.body.toString('latin1'))}`;
  return `${request.method} ${clip(request.target, 200)} [${headers}]${body}${request.raw ? ' (raw socket)' : ''}`;
}

/** Attaches a short description, so fast-check reports a counterexample without 64 KiB of body. */
export function described<T extends HostileRequest>(request: T): T {
  Object.defineProperty(request, fc.toStringMethod, { value: () => summary(request), enumerable: false });
  return request;
}

export class Counter {
  generated = 0;
  total = 0;
  /** How the generated requests were answered: status (or `closed`) → count. */
  readonly outcomes = new Map<string, number>();
  record(response: HostileResponse): void {
    const key = response.status === undefined ? 'closed' : String(response.status);
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
  }
}

/** Characters Node's strict parser refuses in a header value (controls other than tab, and DEL). */
export function hasControl(text: string): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}
