import { Type } from 'typebox';

const PAGE_LIMIT_MAX = 100;
export const PAGE_LIMIT_DEFAULT = 20;

/** `limit`, the same on every list: 1 to 100, default 20. */
export const PageLimit = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: PAGE_LIMIT_MAX,
    default: PAGE_LIMIT_DEFAULT,
    description: 'Maximum number of items returned.',
  }),
);

/** `cursor`, the same on every list: opaque, from the previous page's `Link: rel="next"`. */
export const PageCursor = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 200,
    description:
      'Opaque position from the `Link: rel="next"` header of the previous page. ' +
      'Valid only with the same `status` filter.',
  }),
);

export const NEXT_LINK_HEADER = {
  Link: { type: 'string', description: 'RFC 8288 link to the next page (`rel="next"`); absent on the last page.' },
};
