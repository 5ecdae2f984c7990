/** The rate limit's control on the forms that create and change an endpoint: a number, empty for none. */

/**
 * What the field asks for: null when empty (no limit), else the number as typed, whole or not, for the
 * service to accept or to refuse with its own message. A browser shows a number it cannot read as empty
 * and flags it; that is refused here rather than taken for "none".
 */
export function chosenRateLimit(input: HTMLInputElement): number | null {
  if (input.validity.badInput) throw new Error('The rate limit must be a whole number from 1 to 10000, or empty.');
  const typed = input.value.trim();
  return typed === '' ? null : Number(typed);
}
