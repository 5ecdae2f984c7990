export const NAME_MAX_CHARS = 200;

/** Why a name is refused: nothing visible in it, or too many characters once trimmed. */
export type PetNameProblem = { readonly kind: 'blank' } | { readonly kind: 'too_long'; readonly chars: number };

/**
 * A character that shows: neither white space nor one Unicode says is invisible by default (zero-width
 * space, soft hyphen, joiners, Hangul fillers, variation selectors, tags, …). Those may sit inside a name
 * (an emoji sequence needs the joiner) but cannot be all of it: such a name displays as nothing.
 */
const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}]/u;

/**
 * The name rule beyond what the schema states: at least one visible character, and 1 to 200 Unicode
 * characters (code points) after trimming. Returns why the name is refused, or undefined when it is acceptable.
 */
export function petNameProblem(name: string): PetNameProblem | undefined {
  const trimmed = name.trim();
  if (!VISIBLE.test(trimmed)) return { kind: 'blank' };
  let chars = 0;
  for (const _ of trimmed) chars++;
  return chars > NAME_MAX_CHARS ? { kind: 'too_long', chars } : undefined;
}
