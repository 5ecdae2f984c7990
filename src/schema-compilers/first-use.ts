/**
 * Serializers and validators compile on their route's first use, not at start-up, where compiling all of
 * them was about a quarter of a start's CPU (docs/performance.md, "Start-up"). What has not compiled yet is
 * listed here, so that a test can compile all of it: a broken schema then still fails the tests, not a
 * request in production.
 */
const pending = new Set<() => unknown>();

/** `compile`'s result, made on the first call and kept; until then listed for compileEverySchema. */
export function onFirstUse<T>(compile: () => T): () => T {
  let made: { readonly value: T } | undefined;
  const get = () => {
    if (made === undefined) {
      // Off the list before compiling: a schema that fails fails again at its use, and is not retried here.
      pending.delete(get);
      made = { value: compile() };
    }
    return made.value;
  };
  pending.add(get);
  return get;
}

/** Compiles every serializer and validator made in this process and not yet used; throws a broken schema's error. */
export function compileEverySchema(): void {
  for (const get of [...pending]) get();
}
