/** Calls to the service over real HTTP and what tests assert of its error answers; it starts no service. */
export interface CallOptions {
  /** The bearer key; `null` sends no Authorization header. Defaults to a key with every scope. */
  key?: string | null;
  /** An object is sent as JSON; a string is sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: any;
}

export async function request(
  url: string,
  method: string,
  path: string,
  options: CallOptions,
  defaultKey?: string,
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? defaultKey : options.key;
  if (key !== null && key !== undefined) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: parseJson(text) };
}

/** The value of a JSON text, or undefined when the text is not JSON. */
export function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Asserts the response is an Error body with this status and code; returns its message. */
export function expectError(result: CallResult, status: number, code: string): string {
  const problems: string[] = [];
  if (result.status !== status) problems.push(`status ${result.status}, expected ${status}`);
  if (!result.headers.get('content-type')?.startsWith('application/json')) {
    problems.push(`content-type ${result.headers.get('content-type')}`);
  }
  const body = result.json;
  if (
    typeof body !== 'object' ||
    body === null ||
    body.code !== code ||
    body.status !== status ||
    typeof body.message !== 'string' ||
    Object.keys(body).sort().join() !== 'code,message,status'
  ) {
    problems.push(`body ${result.text}, expected code ${code}`);
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  return body.message;
}
