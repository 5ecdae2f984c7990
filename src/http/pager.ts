import type { FastifyReply } from 'fastify';
import type { RequestCache, StoreCache } from '../cache/store-cache.js';
import type { CursorCodec } from '../domain/cursor.js';
import { ERRORS } from '../errors/catalogue.js';
import { notModifiedSent, pageTag } from './entity-tags.js';
import type { Links } from './links.js';

/** A page as sent: the serialised body, its `Link` header, if any, and its weak `ETag` if the list has them. */
interface CachedPage {
  readonly body: string;
  readonly link: string | undefined;
  readonly etag: string | undefined;
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
  readonly #etags: boolean;

  /**
   * `etags`: pages carry a weak `ETag` and answer 304 to a matching `If-None-Match`; the tag is computed
   * once per page kept, so a page served from the cache costs a comparison.
   */
  constructor(cursors: CursorCodec, links: Links, path: string, cache: StoreCache, { etags = false } = {}) {
    this.#cursors = cursors;
    this.#links = links;
    this.#path = path;
    this.#cache = cache.create(MAX_CACHED_PAGES);
    this.#etags = etags;
  }

  /**
   * Sends one page: `fetch` reads rows in id order after `afterId`, at most `limit` of them. `filters` are
   * the list's filter parameters by name, in a fixed order (those not given undefined): the cursor is bound
   * to them and the next link repeats them. A list whose path varies (one endpoint's deliveries) passes its
   * `path`; its order may be descending, `afterId` then being the last id shown (0 at the start), below
   * which the next page begins.
   */
  async send<T extends { id: number }>(
    reply: FastifyReply,
    query: {
      readonly limit: number;
      readonly filters?: Filters;
      readonly cursor: string | undefined;
      readonly path?: string;
    },
    fetch: (page: { limit: number; afterId: number }) => Promise<T[]>,
  ): Promise<FastifyReply> {
    const filters = query.filters ?? {};
    const filter = filterText(filters);
    const afterId = this.#afterId(query.cursor, filter, Object.keys(filters));
    const path = query.path ?? this.#path;
    const key = `${path}|${filter}|${afterId}|${query.limit}`;
    // The store as the request saw it when it was authenticated, before any fetch: the page as of then.
    const page = await this.#cache.get(reply.request, key, async () => {
      const rows = await fetch({ limit: query.limit + 1, afterId });
      const shown = rows.slice(0, query.limit);
      const link = rows.length > query.limit ? this.#nextLink(path, shown, query.limit, filters) : undefined;
      // The route's compiled serialiser (fast-json-stringify) returns a string.
      const body = String(reply.serialize(shown));
      return { body, link, etag: this.#etags ? pageTag(body, link) : undefined };
    });
    return this.#reply(reply, page);
  }

  #reply(reply: FastifyReply, page: CachedPage): FastifyReply {
    if (page.etag !== undefined && notModifiedSent(reply.request, reply, page.etag)) return reply;
    if (page.link !== undefined) reply.header('link', page.link);
    // A string with a JSON content type is sent as it is: it was serialised by the route's own serialiser.
    return reply.type('application/json; charset=utf-8').send(page.body);
  }

  /** The id after which the page starts: 0 without a cursor. */
  #afterId(cursor: string | undefined, filter: string, names: readonly string[]): number {
    if (cursor === undefined) return 0;
    const position = this.#cursors.decode(cursor);
    if (position === undefined) {
      throw ERRORS.unknownCursor.create();
    }
    if (position.filter !== filter) {
      const values = position.filter.split(FILTER_SEPARATOR);
      const given = names.flatMap((name, i) => (values[i] ? [`${name}=${values[i]}`] : []));
      throw ERRORS.cursorForOtherFilter.create(given.length === 0 ? 'no filter' : given.join(', '));
    }
    return position.afterId;
  }

  /** `Link: rel="next"` for the page after this one (there is one: the fetch found a row beyond it). */
  #nextLink(path: string, page: readonly { id: number }[], limit: number, filters: Filters) {
    const last = page.at(-1);
    if (last === undefined) return undefined;
    const cursor = this.#cursors.encode({ afterId: last.id, filter: filterText(filters) });
    return `<${this.#links.to(path, { limit, ...filters, cursor })}>; rel="next"`;
  }
}

/** A list's filter parameters by name, in the order the list declares them; undefined when not given. */
type Filters = Readonly<Record<string, string | undefined>>;

/** No filter value contains it: they are enum values and ids. */
const FILTER_SEPARATOR = '&';

/**
 * The filters a cursor is bound to: '' without any, else their values in order (an empty one when not
 * given). A list with one filter thus carries its value alone, as cursors always have.
 */
function filterText(filters: Filters): string {
  const values = Object.values(filters);
  return values.every((value) => value === undefined) ? '' : values.map((value) => value ?? '').join(FILTER_SEPARATOR);
}
