/**
 * Who a key acts for, and whose webhook endpoints are whose: a partner's name. Every key of one owner shares
 * its endpoints, so a partner replaces its key without losing its webhooks.
 */
export const OWNER_RULE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const OWNER_PROBLEM = 'an owner is 1 to 64 of a-z 0-9 . _ - and starts with a letter or digit';

/** The owner of every key and endpoint made before owners existed. */
export const DEFAULT_OWNER = 'default';

export function isOwner(text: string): boolean {
  return OWNER_RULE.test(text);
}

/** A key's name as its owner, lower-cased, when that fits the rule; undefined when it does not. */
export function ownerFromKeyName(name: string): string | undefined {
  const owner = name.toLowerCase();
  return isOwner(owner) ? owner : undefined;
}
