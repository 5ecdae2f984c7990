/** One page of a list: its items, and the cursor of the next page when there is one. */
export interface Page<T> {
  readonly items: T[];
  /** Send it as `cursor`, with the same `status`, for the next page; undefined on the last page. */
  readonly nextCursor: string | undefined;
}

/**
 * The `cursor` of the `rel="next"` link of a Link header (RFC 8288); undefined without one. The client takes
 * the cursor rather than following the link: under PUBLIC_URL the link names the public address, which need
 * not be the address this client was given.
 */
export function nextCursor(link: string | null): string | undefined {
  for (const [, target = '', params = ''] of (link ?? '').matchAll(/<([^>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params);
    const types = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    // Only the query matters, and the link may be relative: any base will do.
    if (types.includes('next')) return new URL(target, 'http://localhost').searchParams.get('cursor') ?? undefined;
  }
  return undefined;
}

/** Every item of every page, in order, fetching each page only when the previous one has been consumed. */
export async function* everyItem<T>(page: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void> {
  let cursor: string | undefined;
  do {
    const current = await page(cursor);
    yield* current.items;
    cursor = current.nextCursor;
  } while (cursor !== undefined);
}
