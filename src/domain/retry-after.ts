const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/**
 * The three forms of an HTTP-date (RFC 9110 §5.6.7), each to [day, month, year, hour, minute, second]:
 * IMF-fixdate, which senders use, and the obsolete RFC 850 and asctime forms, which recipients accept.
 */
const HTTP_DATES: readonly { pattern: RegExp; fields: readonly number[] }[] = [
  { pattern: new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`), fields: [1, 2, 3, 4, 5, 6] },
  { pattern: new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`), fields: [1, 2, 3, 4, 5, 6] },
  { pattern: new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`), fields: [2, 1, 6, 3, 4, 5] },
];

/** A two-digit year is the latest year with those digits not more than 50 years from now (RFC 9110 §5.6.7). */
function fullYear(twoDigits: number, now: Date): number {
  const thisYear = now.getUTCFullYear();
  const year = thisYear - (thisYear % 100) + twoDigits;
  return year > thisYear + 50 ? year - 100 : year;
}

/** The instant of an HTTP-date, or undefined when it is none (a date that does not exist is none). */
function parseHttpDate(text: string, now: Date): Date | undefined {
  for (const { pattern, fields } of HTTP_DATES) {
    const match = pattern.exec(text);
    if (match === null) continue;
    const [day, month, year, hour, minute, second] = fields.map((i) => match[i]?.trim() ?? '');
    const monthIndex = MONTHS.indexOf(month as string);
    const y = year?.length === 2 ? fullYear(Number(year), now) : Number(year);
    const at = new Date(Date.UTC(y, monthIndex, Number(day), Number(hour), Number(minute), Number(second)));
    // Date.UTC rolls `31 Feb` into March and `24:00:00` into the next day: the fields must read back.
    const readBack = [at.getUTCDate(), at.getUTCMonth(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()];
    const written = [Number(day), monthIndex, Number(hour), Number(minute), Number(second)];
    return readBack.every((value, i) => value === written[i]) ? at : undefined;
  }
  return undefined;
}

/**
 * How long a `Retry-After` value (RFC 9110 §10.2.3: delay-seconds, or an HTTP-date) asks to wait from
 * `now`, in milliseconds; undefined when it is neither, or a date that has passed.
 */
export function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = parseHttpDate(text, now);
  if (at === undefined || at.getTime() < now.getTime()) return undefined;
  return at.getTime() - now.getTime();
}
