import type { FastifyReply } from 'fastify';
import type { CursorCodec } from '../domain/cursor.js';
import { ApiError } from './error-codes.js';
import type { Links } from './links.js';

/**
 * Keyset pages of one list endpoint: reads the `cursor`, fetches one row more than `limit` (to know
 * whether a next page exists without counting), trims it, and sets `Link: rel="next"` when there is one.
 */
export class Pager {
  readonly #cursors: CursorCodec;
  readonly #links: Links;
  readonly #path: string;

  constructor(cursors: CursorCodec, links: Links, path: string) {
    this.#cursors = cursors;
    this.#links = links;
    this.#path = path;
  }

  /** One page: `fetch` reads rows in id order after `afterId`, at most `limit` of them. */
  async list<T extends { id: number }>(
    reply: FastifyReply,
    query: { readonly limit: number; readonly status: string | undefined; readonly cursor: string | undefined },
    fetch: (page: { limit: number; afterId: number }) => Promise<T[]>,
  ): Promise<T[]> {
    const rows = await fetch({ limit: query.limit + 1, afterId: this.#afterId(query.cursor, query.status) });
    return this.#page(reply, rows, query.limit, query.status);
  }

  /** The id after which the page starts: 0 without a cursor. */
  #afterId(cursor: string | undefined, status: string | undefined): number {
    if (cursor === undefined) return 0;
    const position = this.#cursors.decode(cursor);
    if (position === undefined) {
      throw new ApiError('invalid_request', 'query parameter "cursor" is not a cursor this service issued');
    }
    if (position.filter !== (status ?? '')) {
      const issuedFor = position.filter === '' ? 'no status filter' : `status=${position.filter}`;
      throw new ApiError(
        'invalid_request',
        `query parameter "cursor" was issued for ${issuedFor}; send it with the same status filter`,
      );
    }
    return position.afterId;
  }

  /** The page itself from `limit + 1` rows, with the next link set on the reply when there is more. */
  #page<T extends { id: number }>(reply: FastifyReply, rows: T[], limit: number, status: string | undefined): T[] {
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    if (rows.length > limit && last !== undefined) {
      const cursor = this.#cursors.encode({ afterId: last.id, filter: status ?? '' });
      reply.header('link', `<${this.#links.to(this.#path, { limit, status, cursor })}>; rel="next"`);
    }
    return page;
  }
}
