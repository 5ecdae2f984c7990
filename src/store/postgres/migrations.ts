/**
 * Versioned schema changes, applied in order and recorded in schema_migrations.
 * Never edit a released migration: append a new one.
 */
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE pets (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        TEXT   NOT NULL,
    category_id BIGINT NOT NULL CHECK (category_id >= 1),
    status      TEXT   NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
  );
  -- Serves the status filter in id order: a filtered page reads only the rows it returns.
  CREATE INDEX pets_status_id ON pets (status, id);

  CREATE TABLE api_keys (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         TEXT        NOT NULL,
    prefix       TEXT        NOT NULL,
    hash         TEXT        NOT NULL UNIQUE,
    scopes       TEXT        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
  );
  CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

  CREATE TABLE secrets (
    name  TEXT  PRIMARY KEY,
    value BYTEA NOT NULL
  );
  `,
  `
  CREATE TABLE orders (
    id         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pet_id     BIGINT      NOT NULL REFERENCES pets (id),
    quantity   INTEGER     NOT NULL CHECK (quantity >= 1),
    status     TEXT        NOT NULL CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
    created_at TIMESTAMPTZ NOT NULL
  );
  CREATE INDEX orders_status_id ON orders (status, id);
  CREATE INDEX orders_pet_id ON orders (pet_id);
  `,
  `
  CREATE TABLE idempotency_keys (
    owner       BIGINT      NOT NULL,
    key         TEXT        NOT NULL,
    fingerprint TEXT        NOT NULL,
    status      INTEGER     NOT NULL,
    headers     TEXT        NOT NULL,
    body        TEXT        NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (owner, key)
  );
  CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
  `,
  `
  -- The outbox (docs/decisions/event-outbox.md). tx is the writing transaction's id: the feed orders by
  -- (tx, seq) and shows an event once every transaction with a smaller id has ended, so no event that
  -- commits later can appear before a position already handed out, without a lock on the writes.
  CREATE TABLE events (
    seq             BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx              xid8        NOT NULL DEFAULT pg_current_xact_id(),
    type            TEXT        NOT NULL,
    at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    data            TEXT        NOT NULL,
    previous_status TEXT
  );
  CREATE UNIQUE INDEX events_position ON events (tx, seq);
  CREATE INDEX events_at ON events (at);

  -- The newest position retention removed: a cursor before it would skip events (410).
  CREATE TABLE event_retention (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    purged_tx  BIGINT  NOT NULL,
    purged_seq BIGINT  NOT NULL
  );
  INSERT INTO event_retention (id, purged_tx, purged_seq) VALUES (1, 0, 0);

  CREATE TABLE webhook_endpoints (
    id          BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url         TEXT        NOT NULL,
    events      TEXT        NOT NULL,
    description TEXT,
    enabled     BOOLEAN     NOT NULL,
    secret      TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
  );

  -- One row per (event, endpoint), made in the event's transaction by the trigger below: what is to be sent.
  CREATE TABLE webhook_deliveries (
    id              BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_seq       BIGINT      NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
    endpoint_id     BIGINT      NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    status          TEXT        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ,
    claimed_until   TIMESTAMPTZ,
    UNIQUE (event_seq, endpoint_id)
  );
  -- A claim probes each endpoint's pending deliveries in due order, reading only what it takes (plus what is
  -- in flight), however long a backlog waits. By endpoint and status: an endpoint's oldest pending event
  -- (the first by seq) for the metrics, and its rows when it is deleted. Every index here is paid for by
  -- every create with a subscribed endpoint: measured, each costs it a few microseconds.
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
    WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status, event_seq);

  -- The deliveries log: one row per attempt.
  CREATE TABLE webhook_attempts (
    id              BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id     BIGINT      NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    endpoint_id     BIGINT      NOT NULL,
    event_seq       BIGINT      NOT NULL,
    type            TEXT        NOT NULL,
    attempt         INTEGER     NOT NULL,
    status          TEXT        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    response_status INTEGER,
    error           TEXT,
    attempted_at    TIMESTAMPTZ NOT NULL,
    next_attempt_at TIMESTAMPTZ
  );
  CREATE INDEX webhook_attempts_endpoint_id ON webhook_attempts (endpoint_id, id);
  CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id);

  -- Fan-out: an event is sent to the endpoints enabled for its type when it is recorded, and to no other.
  -- One statement per INSERT into events (a batch of creates makes one), not one per row.
  -- The notice wakes every instance's live streams when the transaction commits (PostgreSQL sends one per
  -- transaction, however many statements notified); its payload, the schema, tells schemas sharing a
  -- database apart.
  CREATE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at)
    SELECT e.seq, w.id, 'pending', e.at FROM new_events e
    JOIN webhook_endpoints w ON w.enabled AND e.type = ANY (string_to_array(w.events, ','));
    PERFORM pg_notify('petstore_events', current_schema());
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER events_fan_out AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION events_fan_out();
  `,
  `
  -- Fan-out after the commit (src/store/postgres/fan-out.ts). The trigger is reduced to its notice, which
  -- wakes every instance's live streams when the transaction commits (one per transaction, however many
  -- statements notified); its payload, the schema, tells schemas sharing a database apart.
  CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('petstore_events', current_schema());
    RETURN NULL;
  END
  $$;
  DROP TRIGGER events_fan_out ON events;
  DROP FUNCTION events_fan_out();
  CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

  -- Each endpoint keeps the (tx, seq) of the last event it was fanned out to. A new one starts after every
  -- transaction that has ended (their ids are below the snapshot's xmax): those recorded before it existed;
  -- those still running are concurrent with its creation, and either way is right for them. (A default,
  -- so an instance of the previous version, in a rolling upgrade, still creates endpoints.)
  -- Dropping the trigger waited for every transaction that inserted events and holds off new inserts until
  -- this commits, so the trigger fanned out every event of a transaction that ended; any later event comes
  -- from a transaction running now or later, whose id is at least the snapshot's xmin. So the endpoints
  -- that exist start at xmin: events of ended transactions with larger ids are looked at again, and
  -- ON CONFLICT keeps the deliveries the trigger queued single. (One it rightly did not queue, to an
  -- endpoint whose subscription changed since, would now be sent: only for transactions running during
  -- the migration, milliseconds.)
  ALTER TABLE webhook_endpoints
    ADD COLUMN fanned_tx xid8 NOT NULL DEFAULT pg_snapshot_xmax(pg_current_snapshot()),
    ADD COLUMN fanned_seq BIGINT NOT NULL DEFAULT 0;
  UPDATE webhook_endpoints SET fanned_tx = pg_snapshot_xmin(pg_current_snapshot());
  `,
  `
  -- The deliveries log outlives deliveries (docs/decisions/expired-deliveries.md): an entry
  -- is kept EVENT_RETENTION_DAYS from its attempt, so a delivery that retention ended keeps its log, and the
  -- failed entry that says so, after its event and delivery are gone. No foreign key to the deliveries
  -- (removing an endpoint removes its log itself); delivery_id is null for a delivery never queued; an index
  -- by time for retention replaces the one by delivery, which served only the cascade.
  ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey,
    ALTER COLUMN delivery_id DROP NOT NULL;
  DROP INDEX webhook_attempts_delivery;
  CREATE INDEX webhook_attempts_attempted_at ON webhook_attempts (attempted_at);
  `,
  `
  -- Secret rotation: the secret a rotation replaced signs alongside the new one until it expires (both
  -- null when none does).
  ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret TEXT,
    ADD COLUMN previous_secret_expires_at TIMESTAMPTZ;
  `,
  `
  -- Why each delivery is sent, and each attempt of it was made (src/domain/delivery-trigger.ts): an event
  -- recorded, an operator's resend or recovery, a test send. The deliveries log filters by status and by
  -- event: each index reads an endpoint's matching entries only, newest first, however long its log is.
  -- A constant default: adding the columns rewrites no row (their check reads each once).
  ALTER TABLE webhook_deliveries ADD COLUMN triggered_by TEXT NOT NULL DEFAULT 'event'
    CHECK (triggered_by IN ('event', 'resend', 'recover', 'test'));
  ALTER TABLE webhook_attempts ADD COLUMN triggered_by TEXT NOT NULL DEFAULT 'event'
    CHECK (triggered_by IN ('event', 'resend', 'recover', 'test'));
  CREATE INDEX webhook_attempts_endpoint_status ON webhook_attempts (endpoint_id, status, id);
  CREATE INDEX webhook_attempts_endpoint_event ON webhook_attempts (endpoint_id, event_seq, id);
  `,
  `
  -- Endpoint health: why and when an endpoint was disabled (an endpoint disabled before is a manual one,
  -- when unknown), and the first failed attempt since its last success or since it was enabled.
  ALTER TABLE webhook_endpoints
    ADD COLUMN disabled_reason TEXT CHECK (disabled_reason IN ('failing', 'gone', 'manual')),
    ADD COLUMN disabled_at TIMESTAMPTZ,
    ADD COLUMN failing_since TIMESTAMPTZ;
  UPDATE webhook_endpoints SET disabled_reason = 'manual' WHERE NOT enabled;
  `,
  `
  -- A receiver's Retry-After (on a 429 or 503) pauses its endpoint: no delivery of it is claimed before this.
  ALTER TABLE webhook_endpoints ADD COLUMN paused_until TIMESTAMPTZ;
  `,
  `
  -- Owners (docs/decisions/owners.md): every key acts for one, every endpoint belongs to one. What existed
  -- before belongs to 'default', and a key that could write, which then managed every endpoint, keeps that
  -- as the scope webhooks. The list of one owner's endpoints, and its count at the bound, read an index.
  -- Constant defaults: adding the columns rewrites no row.
  ALTER TABLE api_keys ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
  UPDATE api_keys SET scopes = scopes || ',webhooks' WHERE 'write' = ANY (string_to_array(scopes, ','));
  ALTER TABLE webhook_endpoints ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
  CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, id);
  -- An event about an endpoint is its owner's alone (feed, stream, deliveries); null for every other event.
  -- Computed from the data it keeps, so nothing that records events changes. Stored (PostgreSQL 15 has no
  -- virtual ones): adding it rewrites the events table once, within retention's size.
  ALTER TABLE events ADD COLUMN owner TEXT GENERATED ALWAYS AS (CASE WHEN substr(type, 1, 17) = 'webhook_endpoint.'
    THEN coalesce(data::jsonb ->> 'owner', 'default') END) STORED;
  -- Portal links traded for a session: each once (src/portal/), kept until it would have expired anyway.
  CREATE TABLE portal_links (
    id         TEXT        PRIMARY KEY,
    expires_at TIMESTAMPTZ NOT NULL
  );
  `,
  `
  -- What fan-out still owes an endpoint the service disabled (a 410, or failing): the newest event the feed
  -- showed then. The bounded fan-out steps queue those events for it, pending, as a PATCH disable queues
  -- them in its transaction. Null: nothing owed. No default: adding them rewrites no row.
  ALTER TABLE webhook_endpoints ADD COLUMN owed_tx xid8, ADD COLUMN owed_seq BIGINT;
  -- A test send goes to an endpoint paused by a Retry-After at once (its retries wait): a claim finds an
  -- endpoint's untried test sends here, not by reading the backlog the pause holds.
  CREATE INDEX webhook_deliveries_first_test ON webhook_deliveries (endpoint_id, id)
    WHERE status = 'pending' AND triggered_by = 'test' AND attempts = 0;
  -- Restores (src/store/postgres/restored.ts, after pg_restore): event ids after a backup's last one up to
  -- where ids went on were, or may have been, handed out by the history the restore lost; a feed cursor
  -- there is 410. A restored event's position moves to (0, seq), since another server's transaction ids
  -- may be ahead of this one's; tx_before_restore keeps the old one, so cursors from before still resolve.
  CREATE TABLE event_gaps (
    lost_after BIGINT NOT NULL,
    resumed_at BIGINT NOT NULL
  );
  ALTER TABLE events ADD COLUMN tx_before_restore xid8;
  `,
  `
  -- The trace a change was made in (a W3C traceparent; src/store/change-trace.ts), when tracing is on: its
  -- webhook attempts are spans of that trace and send it on. Null for the rest; adding it rewrites no row.
  ALTER TABLE events ADD COLUMN trace TEXT;
  `,
  `
  -- Pets you can correct (docs/decisions.md): each pet's version, its ETag, one more with every change;
  -- existing pets start at 1 (a constant default: adding it rewrites no row). A deleted pet's row is
  -- removed, and its orders keep their pet_id, so orders lose the foreign key to pets.
  ALTER TABLE pets ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
  ALTER TABLE orders DROP CONSTRAINT orders_pet_id_fkey;
  `,
  `
  -- Events in order per subject (docs/decisions/events-in-order.md). An event's subject, what it is about:
  -- its type's prefix and its data's id (pet/12); null for a test send. Computed from what the row keeps, as
  -- owner is (stored: adding it rewrites the events table once, within retention's size).
  ALTER TABLE events ADD COLUMN subject TEXT GENERATED ALWAYS AS (CASE
    WHEN substr(type, 1, 4) = 'pet.' THEN 'pet/' || (data::jsonb ->> 'id')
    WHEN substr(type, 1, 6) = 'order.' THEN 'order/' || (data::jsonb ->> 'id')
    WHEN substr(type, 1, 17) = 'webhook_endpoint.' THEN 'webhook_endpoint/' || (data::jsonb ->> 'id')
    END) STORED;
  -- How an endpoint's deliveries are ordered: by subject (the default, for the endpoints that exist too) or not.
  ALTER TABLE webhook_endpoints ADD COLUMN ordering TEXT NOT NULL DEFAULT 'subject'
    CHECK (ordering IN ('subject', 'none'));
  -- A delivery's subject, copied from its event when fan-out queues it: of an endpoint ordered by subject, a
  -- claim takes a subject's delivery only when no earlier one of that subject is pending (through this
  -- index). Null for test sends. The pending ones queued before take theirs now.
  ALTER TABLE webhook_deliveries ADD COLUMN subject TEXT;
  UPDATE webhook_deliveries d SET subject = e.subject FROM events e
    WHERE e.seq = d.event_seq AND d.status = 'pending' AND d.triggered_by = 'event';
  CREATE INDEX webhook_deliveries_subject ON webhook_deliveries (endpoint_id, subject, event_seq)
    WHERE status = 'pending' AND triggered_by = 'event';
  -- The log entry of a delivery queued behind an earlier one of its subject: that one's event.
  ALTER TABLE webhook_attempts ADD COLUMN waiting_for BIGINT;
  `,
  `
  -- What the receiver answered, with each attempt (docs/decisions/delivery-answers.md): how long it took, and
  -- the first 4 KiB of its body (or what it was, when not text), flagged when it was longer. Null on log
  -- entries that were no attempt, and on the attempts recorded before.
  ALTER TABLE webhook_attempts ADD COLUMN duration_ms INTEGER;
  ALTER TABLE webhook_attempts ADD COLUMN response_body TEXT;
  ALTER TABLE webhook_attempts ADD COLUMN response_body_truncated BOOLEAN;
  `,
  `
  -- An Ed25519 endpoint's public keys (docs/decisions/public-key-signatures.md): the one that verifies what its
  -- secret (a \`whsk_\` private key, kept in \`secret\` as HMAC secrets are) signs, and the previous secret's
  -- while that still signs. Null for HMAC secrets, so the endpoints from before are HMAC ones.
  ALTER TABLE webhook_endpoints ADD COLUMN public_key TEXT;
  ALTER TABLE webhook_endpoints ADD COLUMN previous_public_key TEXT;
  `,
  `
  -- An endpoint's rate limit (docs/decisions/endpoint-rate-limit.md): at most this many attempts started a
  -- second; null (the default, for the endpoints that exist too) for none.
  ALTER TABLE webhook_endpoints ADD COLUMN rate_limit INTEGER CHECK (rate_limit BETWEEN 1 AND 10000);
  -- Without Redis, the starts of a limited endpoint's last second, shared by every instance: a JSON list of
  -- [time in ms, how many] (src/domain/start-window.ts). Removed with its endpoint.
  CREATE TABLE webhook_endpoint_starts (
    endpoint_id BIGINT PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    starts      TEXT NOT NULL
  );
  `,
  `
  -- The audit log (docs/decisions/audit-log.md): one row per configuration change, written in the change's
  -- own transaction. The actor and the changed fields are JSON; owner is the target's owner (null: the
  -- operator's alone), which a key without admin reads by (owner, id).
  CREATE TABLE audit_log (
    id          BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL,
    action      TEXT        NOT NULL,
    actor       TEXT        NOT NULL,
    target_kind TEXT        NOT NULL,
    target_id   TEXT        NOT NULL,
    owner       TEXT,
    changes     TEXT,
    request_id  TEXT
  );
  CREATE INDEX audit_log_owner ON audit_log (owner, id);
  CREATE INDEX audit_log_at ON audit_log (at);
  `,
];
