import type { FastifyReply } from 'fastify';
import type { RequestCache, StoreCache } from '../cache/store-cache.js';
import type { CursorCodec } from '../domain/cursor.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Links } from './links.js';

/** A page as sent: the serialised body and its `Link` header, if any. */
interface CachedPage {
  readonly body: string;
  readonly link: string | undefined;
}

/** Pages kept per list at most (a page is a few kilobytes); past that the cache starts over. */
const MAX_CACHED_PAGES = 256;

/**
 * Keyset pages of one list endpoint: reads the `cursor`, fetches one row more than `limit` (to know
 * whether a next page exists without counting), trims it, sets `Link: rel="next"` when there is one, and
 * keeps the serialised page while the store is unchanged.
 */
export class Pager {
  readonly #cursors: CursorCodec;
  readonly #links: Links;
  readonly #path: string;
  readonly #cache: RequestCache<CachedPage>;

  constructor(cursors: CursorCodec, links: Links, path: string, cache: StoreCache) {
    this.#cursors = cursors;
    this.#links = links;
    this.#path = path;
    this.#cache = cache.create(MAX_CACHED_PAGES);
  }

  /**
   * Sends one page: `fetch` reads rows in id order after `afterId`, at most `limit` of them. A list whose
   * path varies (one endpoint's deliveries) passes its `path`; its order may be descending, `afterId` then
   * being the last id shown (0 at the start), below which the next page begins.
   */
  async send<T extends { id: number }>(
    reply: FastifyReply,
    query: {
      readonly limit: number;
      readonly status: string | undefined;
      readonly cursor: string | undefined;
      readonly path?: string;
    },
    fetch: (page: { limit: number; afterId: number }) => Promise<T[]>,
  ): Promise<FastifyReply> {
    const afterId = this.#afterId(query.cursor, query.status);
    const path = query.path ?? this.#path;
    const key = `${path}|${query.status ?? ''}|${afterId}|${query.limit}`;
    // The store as the request saw it when it was authenticated, before any fetch: the page as of then.
    const page = await this.#cache.get(reply.request, key, async () => {
      const rows = await fetch({ limit: query.limit + 1, afterId });
      const shown = rows.slice(0, query.limit);
      const link = rows.length > query.limit ? this.#nextLink(path, shown, query.limit, query.status) : undefined;
      // The route's compiled serialiser (fast-json-stringify) returns a string.
      return { body: String(reply.serialize(shown)), link };
    });
    return this.#reply(reply, page);
  }

  #reply(reply: FastifyReply, page: CachedPage): FastifyReply {
    if (page.link !== undefined) reply.header('link', page.link);
    // A string with a JSON content type is sent as it is: it was serialised by the route's own serialiser.
    return reply.type('application/json; charset=utf-8').send(page.body);
  }

  /** The id after which the page starts: 0 without a cursor. */
  #afterId(cursor: string | undefined, status: string | undefined): number {
    if (cursor === undefined) return 0;
    const position = this.#cursors.decode(cursor);
    if (position === undefined) {
      throw ERRORS.unknownCursor.create();
    }
    if (position.filter !== (status ?? '')) {
      const issuedFor = position.filter === '' ? 'no status filter' : `status=${position.filter}`;
      throw ERRORS.cursorForOtherFilter.create(issuedFor);
    }
    return position.afterId;
  }

  /** `Link: rel="next"` for the page after this one (there is one: the fetch found a row beyond it). */
  #nextLink(path: string, page: readonly { id: number }[], limit: number, status: string | undefined) {
    const last = page.at(-1);
    if (last === undefined) return undefined;
    const cursor = this.#cursors.encode({ afterId: last.id, filter: status ?? '' });
    return `<${this.#links.to(path, { limit, status, cursor })}>; rel="next"`;
  }
}
