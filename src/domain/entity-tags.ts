/**
 * Entity tags (RFC 9110, section 8.8.3) of pets, and the conditions of `If-Match` and `If-None-Match` on them
 * (sections 13.1.1 and 13.1.2). A pet's tag is its version in quotes, strong: it changes with every change.
 */
export const strongTag = (version: number) => `"${version}"`;

/** One entity tag of a list: `W/` for a weak one, and the opaque tag between the quotes. */
const TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/** A version as the opaque part of a tag: what the service issues, a positive integer JSON represents exactly. */
const VERSION = /^[1-9][0-9]{0,14}$/;

/** The elements of a field's list (RFC 9110, section 5.6.1): empty elements are allowed and skipped. */
const elements = (value: string) =>
  value
    .split(',')
    .map((element) => element.trim())
    .filter((element) => element !== '');

/** `*`: any representation (a list holding it besides tags is malformed). */
const isStar = (field: string) => {
  const listed = elements(field);
  return listed.length === 1 && listed[0] === '*';
};

/**
 * The field's entity tags, each `[weak, opaque]`; `undefined` when it is no list of entity tags (an empty
 * list is one), which is all `If-Match` and `If-None-Match` allow besides `*` (sections 13.1.1 and 13.1.2).
 */
function entityTags(field: string): Array<[weak: boolean, opaque: string]> | undefined {
  const tags: Array<[boolean, string]> = [];
  for (const element of elements(field)) {
    const tag = TAG.exec(element);
    if (tag === null) return undefined;
    tags.push([tag[1] !== undefined, tag[2] ?? '']);
  }
  return tags;
}

/**
 * What `If-Match` asks of a pet: `undefined` when the field is absent or `*` (any current pet: one that does
 * not exist is 404 whatever the condition); otherwise the versions it names. A weak tag never matches under
 * the strong comparison If-Match uses, nor does a tag that is no version the service issues; an empty list
 * refuses every version (412). `malformed` when the field is neither `*` nor a list of entity tags (an
 * unquoted `2`, `*` inside a list): nothing is compared, and the request is refused as it is (400).
 */
export function ifMatchVersions(field: string | undefined): readonly number[] | undefined | 'malformed' {
  if (field === undefined || isStar(field)) return undefined;
  const tags = entityTags(field);
  if (tags === undefined) return 'malformed';
  return tags.flatMap(([weak, opaque]) => (!weak && VERSION.test(opaque) ? [Number(opaque)] : []));
}

/**
 * Whether `If-None-Match` names the representation's tag (`W/"…"` or `"…"`) under the weak comparison it
 * uses, or is `*`: then a GET answers 304. A malformed field (neither `*` nor a list of entity tags) is
 * ignored as a whole, as though absent: the full answer is sent.
 */
export function ifNoneMatchHits(field: string | undefined, tag: string): boolean {
  if (field === undefined) return false;
  if (isStar(field)) return true;
  const own = TAG.exec(tag)?.[2];
  return entityTags(field)?.some(([, opaque]) => opaque === own) ?? false;
}
