/** An RFC 3339 date-time, as a JSON Schema pattern: date, `T`, time, optional fraction, `Z` or an offset. */
export const RFC3339_PATTERN = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$';

/** What an RFC 3339 date-time is, in a message. */
export const RFC3339_RULE = 'must be an RFC 3339 date-time, such as 2030-01-01T00:00:00Z';

/**
 * The instant of a text that matches RFC3339_PATTERN, or undefined when its date or time does not exist:
 * Date.parse rolls `02-31` over into March and `24:00` into the next day, so the fields must read back.
 */
export function parseRfc3339(text: string): Date | undefined {
  const at = Date.parse(text.toUpperCase());
  if (Number.isNaN(at)) return undefined;
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(text);
  const offsetMs =
    offset === null ? 0 : (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000;
  const written = new Date(at + offsetMs).toISOString().slice(0, 19);
  return written === text.slice(0, 19).toUpperCase() ? new Date(at) : undefined;
}
