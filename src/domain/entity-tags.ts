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

/**
 * What `If-Match` asks of a pet: `undefined` when the field is absent or `*` (any current pet: one that does
 * not exist is 404 whatever the condition); otherwise the versions it names. A weak tag never matches under
 * the strong comparison If-Match uses, and a malformed field (an element that is no tag) matches nothing:
 * a change must not apply on a condition the service cannot read. An empty list refuses every version (412).
 */
export function ifMatchVersions(field: string | undefined): readonly number[] | undefined {
  if (field === undefined) return undefined;
  const listed = elements(field);
  if (listed.length === 1 && listed[0] === '*') return undefined;
  const tags = listed.map((element) => TAG.exec(element));
  if (tags.some((tag) => tag === null)) return [];
  return tags.flatMap((tag) => (tag?.[1] === undefined && VERSION.test(tag?.[2] ?? '') ? [Number(tag?.[2])] : []));
}

/**
 * Whether `If-None-Match` names the representation's tag (`W/"…"` or `"…"`) under the weak comparison it
 * uses, or is `*`: then a GET answers 304. A malformed field names nothing, so the full answer is sent.
 */
export function ifNoneMatchHits(field: string | undefined, tag: string): boolean {
  if (field === undefined) return false;
  const opaque = (candidate: string) => TAG.exec(candidate)?.[2];
  const own = opaque(tag);
  return elements(field).some((element) => element === '*' || (own !== undefined && opaque(element) === own));
}
