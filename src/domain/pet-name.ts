export const NAME_MAX_CHARS = 200;

/**
 * The name rule beyond what the schema states: 1 to 200 Unicode characters (code points) after trimming.
 * Returns why the name is refused, or undefined when it is acceptable.
 */
export function petNameProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed.length === 0) return 'body.name must contain a character other than white space';
  let chars = 0;
  for (const _ of trimmed) chars++;
  if (chars > NAME_MAX_CHARS) {
    return `body.name must have at most ${NAME_MAX_CHARS} characters after trimming (it has ${chars})`;
  }
  return undefined;
}
