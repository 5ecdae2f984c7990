export const NAME_MAX_CHARS = 200;

/** Why a name is refused: it has nothing but white space, or too many characters once trimmed. */
export type PetNameProblem = { readonly kind: 'blank' } | { readonly kind: 'too_long'; readonly chars: number };

/**
 * The name rule beyond what the schema states: 1 to 200 Unicode characters (code points) after trimming.
 * Returns why the name is refused, or undefined when it is acceptable.
 */
export function petNameProblem(name: string): PetNameProblem | undefined {
  const trimmed = name.trim();
  if (trimmed.length === 0) return { kind: 'blank' };
  let chars = 0;
  for (const _ of trimmed) chars++;
  return chars > NAME_MAX_CHARS ? { kind: 'too_long', chars } : undefined;
}
