import { type Static, Type } from 'typebox';
import { owner } from './webhook.js';

export const PortalLinkRequest = Type.Object(
  {
    owner: Type.Optional(
      owner("Whose endpoints the link opens; by default the key's own owner. Another owner needs `admin`."),
    ),
  },
  { $id: 'PortalLinkRequest', additionalProperties: false, description: 'For whom; the body may be left out.' },
);
export type PortalLinkRequest = Static<typeof PortalLinkRequest>;

export const PortalLink = Type.Object(
  {
    url: Type.String({
      description:
        "Open it in a browser: `<PUBLIC_URL or this request's origin>/portal#<token>`. The token, in the " +
        'fragment, is traded once for a session; the link then no longer opens anything.',
    }),
    owner: owner('Whose endpoints it opens.'),
    expiresAt: Type.String({ format: 'date-time', description: 'Until when it may be opened, and its session lasts.' }),
  },
  { $id: 'PortalLink', additionalProperties: false, description: 'A link to the webhook portal of one owner.' },
);
export type PortalLink = Static<typeof PortalLink>;
