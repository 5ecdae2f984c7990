import { type Static, Type } from 'typebox';
import { DEFAULT_DELIVERY_ORDERING, DELIVERY_ORDERINGS } from '../domain/delivery-ordering.js';
import { DISABLED_REASONS, type DisabledReason } from '../domain/disabled-reason.js';
import type { EventType } from '../domain/event-types.js';
import { OWNER_PROBLEM, OWNER_RULE } from '../domain/owner.js';
import { COUNTED_WINDOW_MS, RATE_LIMIT_MAX, RATE_LIMIT_MIN } from '../domain/start-window.js';
import { PREVIOUS_SECRET_SECONDS, WEBHOOK_SECRET_PREFIX } from '../domain/webhook-secret.js';
import { DEFAULT_WEBHOOK_SIGNATURE, PUBLIC_KEY_PREFIX, WEBHOOK_SIGNATURES } from '../domain/webhook-signature.js';
import { Int64 } from './int64.js';
import { PATTERN_MESSAGE } from './keywords.js';
import { PageLimit } from './page.js';

const WEBHOOK_URL_MAX_CHARS = 2048;
const WEBHOOK_DESCRIPTION_MAX_CHARS = 500;

const Url = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX_CHARS,
  description:
    'Where events are POSTed: an `https://` URL of a public address (a name must resolve only to public ' +
    'addresses), without user name, password or fragment.',
});

const events = (description: string) =>
  Type.Array(Type.Unsafe<EventType>({ $ref: 'EventType' }), { minItems: 1, uniqueItems: true, description });
const Events = events('The event types sent to the endpoint; each at most once.');

/** An owner's name (src/domain/owner.ts), as every schema that names one states it. */
export const owner = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: OWNER_RULE.source,
    [PATTERN_MESSAGE]: `must be an owner name: ${OWNER_PROBLEM.replace(/^an owner is /, '')}`,
    description,
  });

const Description = Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX_CHARS, description: 'Free text for people.' });

const ORDERING_MEANING =
  'How its deliveries are ordered. `subject`: the events of each subject (one pet, one order, one endpoint) are ' +
  'delivered one at a time, in the order they happened, each waiting until the earlier one has succeeded, ' +
  'failed for good or expired; different subjects go in parallel. `none`: every event at once, in any order.';
const ordering = (more = '') =>
  Type.Unsafe<(typeof DELIVERY_ORDERINGS)[number]>({
    type: 'string',
    enum: [...DELIVERY_ORDERINGS],
    description: ORDERING_MEANING + more,
  });

/** An endpoint's rate limit (src/domain/start-window.ts): shown, set on create, changed and cleared alike. */
const RateLimit = Type.Union([Type.Integer({ minimum: RATE_LIMIT_MIN, maximum: RATE_LIMIT_MAX }), Type.Null()], {
  description:
    `At most this many attempts reach the receiver in any one second (${RATE_LIMIT_MIN}–${RATE_LIMIT_MAX.toLocaleString('en')}; ` +
    `the service starts at most this many in any ${COUNTED_WINDOW_MS / 1000} s, the rest a margin for their delays on the way), ` +
    'across every instance; deliveries past it wait as `pending` (no attempt is counted or failed for it), ' +
    'and other endpoints never wait for it. `null`: no limit (the default).',
});

const secret = (description: string) =>
  Type.String({
    description:
      `A signing secret (Standard Webhooks: \`${WEBHOOK_SECRET_PREFIX}\` and the base64 of 32 random bytes). ` +
      description,
  });

// An endpoint's kind of signature and its public keys, in one place: the endpoint, the answers that show a new
// secret, and the bodies that choose the kind all take them from here.
const SIGNATURE_MEANING =
  'How its deliveries are signed (Standard Webhooks), in `webhook-signature`. `hmac`: `v1,` and the base64 ' +
  `HMAC-SHA256 with a \`${WEBHOOK_SECRET_PREFIX}\` secret the receiver holds too. \`ed25519\`: \`v1a,\` and the base64 ` +
  'Ed25519 signature made with a private key only the service holds; the receiver verifies it with `publicKey`.';
const signature = (more = '') =>
  Type.Unsafe<(typeof WEBHOOK_SIGNATURES)[number]>({
    type: 'string',
    enum: [...WEBHOOK_SIGNATURES],
    description: SIGNATURE_MEANING + more,
  });
const publicKey = (description: string) =>
  Type.Union([Type.String({ pattern: `^${PUBLIC_KEY_PREFIX}` }), Type.Null()], {
    description: `An Ed25519 public key: \`${PUBLIC_KEY_PREFIX}\` and the base64 of its 32 raw bytes. ${description}`,
  });
const SIGNATURE_PROPERTIES = {
  signature: signature(),
  publicKey: publicKey('It verifies the `v1a` signature of every delivery; `null` when `signature` is `hmac`.'),
  previousPublicKey: publicKey(
    'The one replaced by the latest rotation (or change of `signature`), which verifies the second signature ' +
      'until `previousSecretExpiresAt`; `null` when no Ed25519 key was replaced.',
  ),
};
const SHOWN_ONCE = `Present only when \`signature\` is \`hmac\`: an Ed25519 endpoint has no secret to share.`;

const PreviousSecretExpiresAt = Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
  description:
    'Until when (UTC) the secret replaced by the latest rotation also signs every delivery, beside the ' +
    'current one; `null` when no rotation left one signing. Once past, only the current secret signs.',
});

const ENDPOINT_PROPERTIES = {
  id: Int64({ minimum: 1, description: 'Assigned by the service.' }),
  owner: owner(
    'The partner it belongs to: only keys of this owner, and admin keys, see it, change it and its deliveries.',
  ),
  url: Url,
  events: Events,
  description: Type.Union([Description, Type.Null()]),
  enabled: Type.Boolean({ description: 'Only an enabled endpoint is sent the events recorded meanwhile.' }),
  ordering: ordering(),
  rateLimit: RateLimit,
  ...SIGNATURE_PROPERTIES,
  createdAt: Type.String({ format: 'date-time', description: 'When the endpoint was registered (UTC).' }),
  previousSecretExpiresAt: PreviousSecretExpiresAt,
  disabledReason: Type.Union(
    [Type.Unsafe<DisabledReason>({ type: 'string', enum: [...DISABLED_REASONS] }), Type.Null()],
    {
      description:
        'Why it is disabled: `manual` (a change set `enabled: false`), `failing` (every attempt failed for ' +
        '`WEBHOOK_DISABLE_AFTER`, by default 5 days), `gone` (it answered 410 Gone); `null` while enabled. ' +
        'Enabling it clears this and sends the deliveries that waited.',
    },
  ),
  disabledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When it was disabled (UTC); `null` while enabled.',
  }),
  pausedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'No attempt goes to it before this time (UTC): its receiver asked, with `Retry-After` on a 429 or 503 ' +
      "(capped at the retry schedule's longest delay). `null` when it never did; a past time holds nothing back.",
  }),
};

export const WebhookEndpoint = Type.Object(ENDPOINT_PROPERTIES, {
  $id: 'WebhookEndpoint',
  additionalProperties: false,
  description:
    'Where the service sends events; its signing secret is shown only when it is created or rotated (or changed ' +
    'to `hmac`), its public key always.',
});
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;
/** `subject` or `none`: how an endpoint's deliveries are ordered. */
export type DeliveryOrdering = WebhookEndpoint['ordering'];
/** `hmac` or `ed25519`: how an endpoint's deliveries are signed. */
export type WebhookSignature = WebhookEndpoint['signature'];

export const CreatedWebhookEndpoint = Type.Object(
  {
    ...ENDPOINT_PROPERTIES,
    secret: Type.Optional(
      secret(`Shown only now: keep it to verify the \`webhook-signature\` of every delivery. ${SHOWN_ONCE}`),
    ),
  },
  {
    $id: 'CreatedWebhookEndpoint',
    additionalProperties: false,
    description: 'A new endpoint, with its secret (HMAC) or its public key (Ed25519).',
  },
);
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>;

export const ChangedWebhookEndpoint = Type.Object(
  {
    ...ENDPOINT_PROPERTIES,
    secret: Type.Optional(
      secret('Present only when this change made `signature` `hmac`: the new secret, shown only now.'),
    ),
  },
  {
    $id: 'ChangedWebhookEndpoint',
    additionalProperties: false,
    description: 'The endpoint, changed; with its new secret when the change made one to share.',
  },
);
export type ChangedWebhookEndpoint = Static<typeof ChangedWebhookEndpoint>;

export const NewWebhookEndpoint = Type.Object(
  {
    url: Url,
    // Defaulted by the route, not a `default` keyword, which would make generated clients require it.
    events: Type.Optional(
      events('The event types to send, each at most once; by default every type but `webhook_endpoint.disabled`.'),
    ),
    description: Type.Optional(Description),
    // Defaulted by the route, as events is.
    ordering: Type.Optional(ordering(` By default \`${DEFAULT_DELIVERY_ORDERING}\`.`)),
    // Defaulted by the route, as events is.
    signature: Type.Optional(signature(` By default \`${DEFAULT_WEBHOOK_SIGNATURE}\`.`)),
    rateLimit: Type.Optional(RateLimit),
    owner: Type.Optional(
      owner("Whose endpoint it is; by default the key's own owner. Naming another owner needs the `admin` scope."),
    ),
  },
  { $id: 'NewWebhookEndpoint', additionalProperties: false, description: 'Registers an endpoint, enabled.' },
);
export type NewWebhookEndpoint = Static<typeof NewWebhookEndpoint>;

export const WebhookEndpointChange = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.Union([Description, Type.Null()], { description: '`null` clears it.' })),
    ordering: Type.Optional(ordering()),
    signature: Type.Optional(
      signature(
        ' A different kind acts as a rotation: the endpoint gets a new secret or key pair of that kind, and the ' +
          'one it had keeps signing beside it for a day (`previousSecretExpiresAt`), so a receiver moves over ' +
          'without missing a delivery. The same kind changes nothing.',
      ),
    ),
    rateLimit: Type.Optional(RateLimit),
  },
  {
    $id: 'WebhookEndpointChange',
    additionalProperties: false,
    minProperties: 1,
    description: 'Changes the fields sent and keeps the others; at least one.',
  },
);
export type WebhookEndpointChange = Static<typeof WebhookEndpointChange>;

export const WebhookSecretRotation = Type.Object(
  {
    previousSecretExpiresIn: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: PREVIOUS_SECRET_SECONDS.max,
        description:
          `Seconds the current secret keeps signing beside the new one (default ${PREVIOUS_SECRET_SECONDS.default}, ` +
          'a day); `0` stops it at once.',
      }),
    ),
  },
  {
    $id: 'WebhookSecretRotation',
    additionalProperties: false,
    description: 'How long the secret being replaced keeps signing; the body may be left out.',
  },
);
export type WebhookSecretRotation = Static<typeof WebhookSecretRotation>;

export const RotatedWebhookSecret = Type.Object(
  {
    secret: Type.Optional(
      secret(`The new one, shown only now: every delivery is signed with it from now on. ${SHOWN_ONCE}`),
    ),
    ...SIGNATURE_PROPERTIES,
    previousSecretExpiresAt: PreviousSecretExpiresAt,
  },
  { $id: 'RotatedWebhookSecret', additionalProperties: false, description: "An endpoint's new signing secret." },
);
export type RotatedWebhookSecret = Static<typeof RotatedWebhookSecret>;

/** The query of the endpoints list: its cursor is bound to the owner filter. */
export const WebhookPageQuery = Type.Object(
  {
    limit: PageLimit,
    owner: Type.Optional(
      owner(
        "Only this owner's endpoints. A key without `admin` sees only its own owner's anyway, and naming " +
          'another is 403.',
      ),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Opaque position from the `Link: rel="next"` header of the previous page.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookPageQuery = Static<typeof WebhookPageQuery>;

export const WebhookIdParams = Type.Object({
  webhookId: Int64({ description: 'Identifier of the webhook endpoint.' }),
});
