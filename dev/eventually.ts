import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to keep trying; then the wait fails naming what it waited for. */
  readonly timeoutMs?: number;
  /** The pause between two tries. */
  readonly everyMs?: number;
}

/** What is waited for, in the failure's message; a function is asked at the failure (to say how far it got). */
export type What = string | (() => string);

/** Calls `probe` until it returns a value (not undefined) and returns that; fails after `timeoutMs`. */
export async function eventually<T>(
  what: What,
  probe: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 5000, everyMs = 25 }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`${typeof what === 'string' ? what : what()}: not within ${timeoutMs} ms`);
    }
    await sleep(everyMs);
  }
}

/** Waits until `check` holds; fails after `timeoutMs`. */
export async function waitUntil(
  what: What,
  check: () => boolean | Promise<boolean>,
  options: WaitOptions = {},
): Promise<void> {
  await eventually(what, async () => ((await check()) ? true : undefined), options);
}
