/** A failure is told in at most this many lines: enough for a loader error and its causes, never a stack. */
const MAX_LINES = 12;

/** One error's own text: its message, or for an AggregateError without one (a refused dual-stack connect), its errors'. */
function ownText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message.trim() !== '') return error.message;
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(ownText).join('; ');
  return error.name;
}

/**
 * What went wrong, as the lines to print after "petstore: ": every line of the message (a native module's
 * loader error says what to do in its last line) and then each `cause`, so nothing that explains the failure
 * is cut off. Capped at MAX_LINES.
 */
function failureLines(error: unknown): string[] {
  const lines: string[] = [];
  const seen = new Set<unknown>();
  let current: unknown = error;
  let prefix = '';
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    const own = ownText(current)
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    if (own.length > 0) lines.push(`${prefix}${own[0]}`, ...own.slice(1));
    current = current instanceof Error ? current.cause : undefined;
    prefix = 'caused by: ';
  }
  if (lines.length === 0) return ['failed, without saying why'];
  if (lines.length <= MAX_LINES) return lines;
  return [...lines.slice(0, MAX_LINES - 1), `… ${lines.length - MAX_LINES + 1} more lines`];
}

/** The failure as printed on stderr: "petstore: " before the first line, the others indented under it. */
export function formatFailure(error: unknown): string {
  return `${failureLines(error)
    .map((line, i) => (i === 0 ? `petstore: ${line}` : `  ${line}`))
    .join('\n')}\n`;
}
