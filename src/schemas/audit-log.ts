import { type Static, Type } from 'typebox';
import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS, AUDIT_TARGET_KINDS } from '../domain/audit.js';
import { RFC3339_PATTERN, RFC3339_RULE } from '../domain/rfc3339.js';
import { PATTERN_MESSAGE } from './keywords.js';
import { PageLimit } from './page.js';
import { filterParameter } from './query.js';
import { owner } from './webhook.js';

// Spelled out, not the domain's types: the client's types (dev/pack-client.ts) expand them to plain TypeScript.
type Action = (typeof AUDIT_ACTIONS)[number];
type ActorKind = (typeof AUDIT_ACTOR_KINDS)[number];
type TargetKind = (typeof AUDIT_TARGET_KINDS)[number];

const AuditActor = Type.Object(
  {
    kind: Type.Unsafe<ActorKind>({
      type: 'string',
      enum: [...AUDIT_ACTOR_KINDS],
      description:
        '`key`: an API key; `portal`: a portal session of `owner`; `cli`: the command line (`petstore keys`, ' +
        '`restore`); `service`: the service itself (an endpoint disabled for failing or answering 410, the first key).',
    }),
    keyId: Type.Optional(
      Type.Integer({ description: 'The key; for `portal`, the key that made the link the session was opened with.' }),
    ),
    keyName: Type.Optional(Type.String({ description: "The key's name, for `key`." })),
    owner: Type.Optional(Type.String({ description: 'The owner the key or the portal session acts for.' })),
  },
  { $id: 'AuditActor', additionalProperties: false, description: 'Who made the change.' },
);

const FieldChange = Type.Object(
  {
    before: Type.Unknown({ description: 'The value before (null: none, as before a creation).' }),
    after: Type.Unknown({ description: 'The value after (null: none, as after a deletion).' }),
  },
  { additionalProperties: false },
);

export const AuditEntry = Type.Object(
  {
    id: Type.Integer({ description: 'Identifier of the entry: later entries have higher ones.' }),
    at: Type.String({ format: 'date-time', description: 'When the change was made (UTC).' }),
    actor: Type.Unsafe<Static<typeof AuditActor>>({ $ref: 'AuditActor' }),
    action: Type.Unsafe<Action>({
      type: 'string',
      enum: [...AUDIT_ACTIONS],
      description:
        'What was done. A change of an endpoint that moved `enabled` is `webhook_endpoint.enabled` or ' +
        '`webhook_endpoint.disabled`; any other change of its fields is `webhook_endpoint.updated`.',
    }),
    target: Type.Object(
      {
        kind: Type.Unsafe<TargetKind>({ type: 'string', enum: [...AUDIT_TARGET_KINDS] }),
        id: Type.String({
          description: "Its id (an endpoint's or a key's; a portal link's is a digest, never its token).",
        }),
        owner: Type.Optional(
          Type.String({ description: "Whose it is; left out for the operator's alone (a restore)." }),
        ),
      },
      { additionalProperties: false, description: 'What was changed.' },
    ),
    // An index signature, not Record<…>: the client's types (dev/pack-client.ts) keep to plain TypeScript.
    changes: Type.Optional(
      Type.Unsafe<{ [field: string]: { before: unknown; after: unknown } }>(
        Type.Record(Type.String(), FieldChange, {
          description:
            'Each changed field, before and after, as `GET /webhooks/{webhookId}` shows it: never a secret, a key ' +
            'or a token (a rotation says that it happened, and what it shows that changed).',
        }),
      ),
    ),
    requestId: Type.Optional(Type.String({ description: 'The `X-Request-Id` of the request that made the change.' })),
  },
  { $id: 'AuditEntry', additionalProperties: false, description: 'One configuration change: who, what, when.' },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLogSchemas = [AuditActor, AuditEntry];

/** `kind/id`, as an entry's target: `webhook_endpoint/12`. */
const TARGET_FILTER = `^(${AUDIT_TARGET_KINDS.join('|')})/[^&]{1,200}$`;

/** The audit log's query: its filters bind the cursor. */
export const AuditLogQuery = Type.Object(
  {
    limit: PageLimit,
    action: filterParameter(AUDIT_ACTIONS, 'Only entries of this action.'),
    target: Type.Optional(
      Type.String({
        pattern: TARGET_FILTER,
        [PATTERN_MESSAGE]: `must be a target's kind and id, such as webhook_endpoint/12 (kinds: ${AUDIT_TARGET_KINDS.join(', ')})`,
        description: 'Only entries about this target, as `kind/id`: `webhook_endpoint/12`.',
      }),
    ),
    since: Type.Optional(
      Type.String({
        pattern: RFC3339_PATTERN,
        [PATTERN_MESSAGE]: RFC3339_RULE,
        format: 'date-time',
        description: 'Only entries made at or after this instant.',
      }),
    ),
    owner: Type.Optional(
      owner(
        "Only this owner's entries. A key without `admin` sees only its own owner's anyway, and naming another is 403.",
      ),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Opaque position from the `Link: rel="next"` header of the previous page. Valid only with the same filters.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AuditLogQuery = Static<typeof AuditLogQuery>;
