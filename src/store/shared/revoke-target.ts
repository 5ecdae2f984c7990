/** The key `keys revoke` names: digits are an id, anything else a name. */
export type RevokeTarget =
  | { readonly column: 'id'; readonly value: number }
  | { readonly column: 'name'; readonly value: string };

/** undefined for an id beyond 2^53 - 1, which no key has (it would be rounded to another key's id). */
export function revokeTarget(idOrName: string): RevokeTarget | undefined {
  if (!/^\d+$/.test(idOrName)) return { column: 'name', value: idOrName };
  const id = Number(idOrName);
  return Number.isSafeInteger(id) ? { column: 'id', value: id } : undefined;
}
