/** A figure for the report: thousands separated, `digits` decimals. */
export function number(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
