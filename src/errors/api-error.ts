import { ERROR_CODES, type ErrorCode } from '../schemas/error-codes.js';

/** An error the API answers on purpose: its code decides the status, its message is shown to the client. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Readonly<Record<string, string>>, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ApiError';
    this.code = code;
    this.statusCode = ERROR_CODES[code];
    this.headers = headers;
  }
}

type Headers<A extends readonly unknown[]> =
  | Readonly<Record<string, string>>
  | ((...args: A) => Record<string, string>);

/** One kind of error the API answers: its code, its message template and the headers it always carries. */
export interface ErrorKind<A extends readonly unknown[]> {
  readonly code: ErrorCode;
  message(...args: A): string;
  create(...args: A): ApiError;
  /** As create, keeping what caused it (logged, never shown). */
  because(cause: unknown, ...args: A): ApiError;
}

export function errorKind<A extends readonly unknown[]>(
  code: ErrorCode,
  message: (...args: A) => string,
  headers: Headers<A> = {},
): ErrorKind<A> {
  const headersOf = typeof headers === 'function' ? headers : () => headers;
  const because = (cause: unknown, ...args: A) => new ApiError(code, message(...args), headersOf(...args), cause);
  return { code, message, create: (...args: A) => because(undefined, ...args), because };
}
