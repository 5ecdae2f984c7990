/**
 * An endpoint's rate limit (`rateLimit`): at most N attempts started in any one-second window, as its
 * receiver sees them. A token bucket of N refilling N/s lets 2N through in a sliding second (a full bucket,
 * then a second's refill), so the limit keeps a sliding log instead: the starts of the last window, as
 * batches of [time in ms, how many]. A start at `now` is allowed while fewer than N starts are logged after
 * `now - COUNTED_WINDOW_MS` (later ones too: another instance's clock, or its call, may have run ahead),
 * which holds in every window that contains it. The window counted is the second and a guard: a request
 * reaches its receiver some milliseconds after its start is counted, more for one than another (the sender's
 * event loop, the network, the receiver's), and a second's starts bunched up with the next second's would
 * show the receiver more than N. So N start in any 1.1 s, and a receiver sees at most N in any second while
 * those delays differ by less than the guard. A start is logged when granted, and its request written a
 * little later; one written later than MOVED_AFTER_MS (a busy process, a slow read of the signing secrets)
 * moves its batch to that time (moveStarts), so that the next window's starts, on any instance, are
 * counted from when it was really sent. The log keeps two windows, not one: a take whose time is
 * behind the last one logged (another instance's clock, a call that waited for the lock) still sees every
 * start of the window before its own time. One batch per grant keeps the log as long as the grants of two
 * windows, not N. Both stores run this; the Redis limiter (webhooks/redis-start-limiter.ts) mirrors it in Lua.
 */
export const RATE_LIMIT_WINDOW_MS = 1000;
/** What the window counted adds to the second, for the spread of the requests' delays on their way. */
const START_GUARD_MS = 100;
export const COUNTED_WINDOW_MS = RATE_LIMIT_WINDOW_MS + START_GUARD_MS;
/** A request written this long after its grant moves its batch's start to when it was written. */
export const MOVED_AFTER_MS = 10;
export const RATE_LIMIT_MIN = 1;
export const RATE_LIMIT_MAX = 10_000;
/** How long a start stays in the log: two windows, for takes whose time is behind the newest start's. */
export const KEPT_MS = 2 * COUNTED_WINDOW_MS;

/** The starts of the last window: [time in ms, how many started then], oldest first. */
export type StartLog = ReadonlyArray<readonly [number, number]>;

/** What a limiter answers: how many of the starts asked for may begin now, and when each of the rest may. */
export interface StartGrant {
  readonly granted: number;
  /** The time in ms (epoch) the granted starts were logged at: when they count as started. */
  readonly at: number;
  /** For each start refused, in order, the time in ms (epoch) from which it may be tried again: a hint only. */
  readonly retryAt: readonly number[];
}

/** Takes up to `wanted` starts at `now` (ms) from an endpoint limited to `limit` a second; the log after. */
export function takeStarts(
  log: StartLog,
  limit: number,
  wanted: number,
  now: number,
): { readonly log: StartLog; readonly grant: StartGrant } {
  const kept = log.filter(([at]) => at > now - KEPT_MS);
  const counted = kept.filter(([at]) => at > now - COUNTED_WINDOW_MS);
  const used = counted.reduce((sum, [, count]) => sum + count, 0);
  const granted = Math.max(0, Math.min(wanted, limit - used));
  const entry: StartLog = granted > 0 ? [[now, granted]] : [];
  const retryAt = Array.from({ length: wanted - granted }, (_, i) => freeAt([...counted, ...entry], limit, i + 1, now));
  return { log: [...kept, ...entry], grant: { granted, at: now, retryAt } };
}

/**
 * When the `nth` start after those logged may begin: once enough of the logged ones have left the window
 * (the oldest first), each start beyond what the log frees waiting whole windows more, as it would if the
 * starts before it went as soon as allowed.
 */
function freeAt(log: StartLog, limit: number, nth: number, now: number): number {
  const sorted = [...log].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  const mustLeave = total - limit + nth;
  if (mustLeave <= 0) return now;
  const rounds = Math.floor((mustLeave - 1) / Math.max(1, total));
  let left = mustLeave - rounds * total;
  for (const [at, count] of sorted) {
    left -= count;
    if (left <= 0) return at + (rounds + 1) * COUNTED_WINDOW_MS;
  }
  return now + COUNTED_WINDOW_MS;
}

/**
 * The log once the starts of `grant` were made by `madeAt`: its batch (the first of its time and size) is
 * counted from then, never earlier. Unchanged when the batch has left the log.
 */
function moveStarts(log: StartLog, grant: Pick<StartGrant, 'at' | 'granted'>, madeAt: number): StartLog {
  const i = log.findIndex(([at, count]) => at === grant.at && count === grant.granted);
  const batch = log[i];
  if (batch === undefined || batch[0] >= madeAt) return log;
  return log.map((entry, j) => (j === i ? [madeAt, entry[1]] : entry));
}

/** A change of an endpoint's log, as a store applies it under the endpoint's lock: the log after, and its answer. */
export type StartLogChange<T> = (log: StartLog) => { readonly log: StartLog; readonly result: T };

/** takeStarts at the time the change runs (the lock is held): its grant is the answer. */
export const taking =
  (limit: number, wanted: number): StartLogChange<StartGrant> =>
  (log) => {
    const taken = takeStarts(log, limit, wanted, Date.now());
    return { log: taken.log, result: taken.grant };
  };

/** moveStarts of `grant`'s batch, logged at `from`, to `madeAt`. */
export const moving =
  (grant: StartGrant, from: number, madeAt: number): StartLogChange<void> =>
  (log) => ({ log: moveStarts(log, { at: from, granted: grant.granted }, madeAt), result: undefined });

/** A log as a column keeps it (JSON); an unreadable one is empty, which can only let a few more start. */
export function parseStartLog(text: string | null | undefined): StartLog {
  if (text == null) return [];
  try {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value)) return [];
    return value.filter(
      (entry): entry is [number, number] =>
        Array.isArray(entry) && typeof entry[0] === 'number' && typeof entry[1] === 'number',
    );
  } catch {
    return [];
  }
}
