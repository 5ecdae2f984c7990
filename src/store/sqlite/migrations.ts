/**
 * Versioned schema changes, applied in order and recorded in schema_migrations.
 * Never edit a released migration: append a new one.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE pets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    category_id INTEGER NOT NULL CHECK (category_id >= 1),
    status      TEXT    NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
  ) STRICT;
  -- Serves the status filter in id order: a filtered page reads only the rows it returns.
  CREATE INDEX pets_status_id ON pets (status, id);

  CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL,
    prefix       TEXT    NOT NULL,
    hash         TEXT    NOT NULL UNIQUE,
    scopes       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    revoked_at   INTEGER
  ) STRICT;
  CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

  CREATE TABLE secrets (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
  ) STRICT;
  `,
  `
  CREATE TABLE orders (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id     INTEGER NOT NULL REFERENCES pets (id),
    quantity   INTEGER NOT NULL CHECK (quantity >= 1),
    status     TEXT    NOT NULL CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX orders_status_id ON orders (status, id);
  CREATE INDEX orders_pet_id ON orders (pet_id);
  `,
  `
  CREATE TABLE idempotency_keys (
    owner       INTEGER NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    headers     TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
  ) STRICT;
  CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
  `,
  `
  -- The outbox (docs/decisions/event-outbox.md): every change to pets and orders records its events here in its
  -- own transaction. seq is the commit order: one writer at a time, and AUTOINCREMENT never reuses a number.
  CREATE TABLE events (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    type            TEXT    NOT NULL,
    at              INTEGER NOT NULL,
    data            TEXT    NOT NULL,
    previous_status TEXT
  ) STRICT;
  CREATE INDEX events_type_seq ON events (type, seq);
  CREATE INDEX events_at ON events (at);

  -- The newest position retention removed: a cursor before it would skip events (410).
  CREATE TABLE event_retention (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    purged_tx  INTEGER NOT NULL,
    purged_seq INTEGER NOT NULL
  ) STRICT;
  INSERT INTO event_retention (id, purged_tx, purged_seq) VALUES (1, 0, 0);

  CREATE TABLE webhook_endpoints (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    url         TEXT    NOT NULL,
    events      TEXT    NOT NULL,
    description TEXT,
    enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    secret      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
  ) STRICT;

  -- One row per (event, endpoint), made in the event's transaction by the trigger below: what is to be sent.
  CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    event_seq       INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
    endpoint_id     INTEGER NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    claimed_until   INTEGER,
    UNIQUE (event_seq, endpoint_id)
  ) STRICT;
  -- A claim probes each endpoint's pending deliveries in due order, reading only what it takes (plus what is
  -- in flight), however long a backlog waits. By endpoint and status: an endpoint's oldest pending event
  -- (the first by seq) for the metrics, and its rows when it is deleted. Every index here is paid for by
  -- every create with a subscribed endpoint: measured, each costs it a few microseconds.
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
    WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status, event_seq);

  -- The deliveries log: one row per attempt.
  CREATE TABLE webhook_attempts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id     INTEGER NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    endpoint_id     INTEGER NOT NULL,
    event_seq       INTEGER NOT NULL,
    type            TEXT    NOT NULL,
    attempt         INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    response_status INTEGER,
    error           TEXT,
    attempted_at    INTEGER NOT NULL,
    next_attempt_at INTEGER
  ) STRICT;
  CREATE INDEX webhook_attempts_endpoint_id ON webhook_attempts (endpoint_id, id);
  CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id);

  -- Fan-out: an event is sent to the endpoints enabled for its type when it is recorded, and to no other.
  CREATE TRIGGER events_fan_out AFTER INSERT ON events BEGIN
    INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at)
    SELECT NEW.seq, id, 'pending', NEW.at FROM webhook_endpoints
    WHERE enabled = 1 AND instr(',' || events || ',', ',' || NEW.type || ',') > 0;
  END;
  `,
  `
  -- Fan-out after the commit (src/store/sqlite/fan-out.ts): each endpoint keeps the seq of the newest event
  -- it was fanned out to. The trigger fanned out every event recorded so far, in the event's transaction.
  ALTER TABLE webhook_endpoints ADD COLUMN fanned_seq INTEGER NOT NULL DEFAULT 0;
  UPDATE webhook_endpoints SET fanned_seq = (SELECT coalesce(max(seq), 0) FROM events);
  DROP TRIGGER events_fan_out;
  `,
  `
  -- The deliveries log outlives deliveries (docs/decisions/expired-deliveries.md): an entry
  -- is kept EVENT_RETENTION_DAYS from its attempt, so a delivery that retention ended keeps its log, and the
  -- failed entry that says so, after its event and delivery are gone. No foreign key to the deliveries
  -- (removing an endpoint removes its log itself); delivery_id is null for a delivery never queued; an index
  -- by time for retention replaces the one by delivery, which served only the cascade. SQLite drops a
  -- constraint only by making the table anew; its sequence is carried over, so ids (the log's pages) grow on.
  CREATE TABLE webhook_attempts_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id     INTEGER,
    endpoint_id     INTEGER NOT NULL,
    event_seq       INTEGER NOT NULL,
    type            TEXT    NOT NULL,
    attempt         INTEGER NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    response_status INTEGER,
    error           TEXT,
    attempted_at    INTEGER NOT NULL,
    next_attempt_at INTEGER
  ) STRICT;
  INSERT INTO webhook_attempts_new (id, delivery_id, endpoint_id, event_seq, type, attempt, status, response_status,
    error, attempted_at, next_attempt_at)
  SELECT id, delivery_id, endpoint_id, event_seq, type, attempt, status, response_status, error, attempted_at,
    next_attempt_at FROM webhook_attempts;
  DELETE FROM sqlite_sequence WHERE name = 'webhook_attempts_new';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'webhook_attempts_new', seq FROM sqlite_sequence
    WHERE name = 'webhook_attempts';
  DROP TABLE webhook_attempts;
  ALTER TABLE webhook_attempts_new RENAME TO webhook_attempts;
  CREATE INDEX webhook_attempts_endpoint_id ON webhook_attempts (endpoint_id, id);
  CREATE INDEX webhook_attempts_attempted_at ON webhook_attempts (attempted_at);
  `,
  `
  -- Secret rotation: the secret a rotation replaced signs alongside the new one until it expires (both
  -- null when none does).
  ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
  ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at INTEGER;
  `,
  `
  -- Why each delivery is sent, and each attempt of it was made (src/domain/delivery-trigger.ts): an event
  -- recorded, an operator's resend or recovery, a test send. The deliveries log filters by status and by
  -- event: each index reads an endpoint's matching entries only, newest first, however long its log is.
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
  ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT
    CHECK (disabled_reason IN ('failing', 'gone', 'manual'));
  ALTER TABLE webhook_endpoints ADD COLUMN disabled_at INTEGER;
  ALTER TABLE webhook_endpoints ADD COLUMN failing_since INTEGER;
  UPDATE webhook_endpoints SET disabled_reason = 'manual' WHERE enabled = 0;
  `,
  `
  -- A receiver's Retry-After (on a 429 or 503) pauses its endpoint: no delivery of it is claimed before this.
  ALTER TABLE webhook_endpoints ADD COLUMN paused_until INTEGER;
  `,
  `
  -- Owners (docs/decisions/owners.md): every key acts for one, every endpoint belongs to one. What existed
  -- before belongs to 'default', and a key that could write, which then managed every endpoint, keeps that
  -- as the scope webhooks. The list of one owner's endpoints, and its count at the bound, read an index.
  ALTER TABLE api_keys ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
  UPDATE api_keys SET scopes = scopes || ',webhooks' WHERE instr(',' || scopes || ',', ',write,') > 0;
  ALTER TABLE webhook_endpoints ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
  CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, id);
  -- An event about an endpoint is its owner's alone (feed, stream, deliveries); null for every other event.
  -- Computed from the data it keeps, so nothing that records events changes; virtual, so creates pay nothing.
  ALTER TABLE events ADD COLUMN owner TEXT GENERATED ALWAYS AS (CASE WHEN substr(type, 1, 17) = 'webhook_endpoint.'
    THEN coalesce(json_extract(data, '$.owner'), 'default') END) VIRTUAL;
  -- Portal links traded for a session: each once (src/portal/), kept until it would have expired anyway.
  CREATE TABLE portal_links (
    id         TEXT    PRIMARY KEY,
    expires_at INTEGER NOT NULL
  ) STRICT;
  `,
  `
  -- What fan-out still owes an endpoint the service disabled (a 410, or failing): the newest event then. The
  -- bounded fan-out steps queue those events for it, pending, as a PATCH disable queues them in its write.
  ALTER TABLE webhook_endpoints ADD COLUMN owed_seq INTEGER;
  -- A test send goes to an endpoint paused by a Retry-After at once (its retries wait): a claim finds an
  -- endpoint's untried test sends here, not by reading the backlog the pause holds.
  CREATE INDEX webhook_deliveries_first_test ON webhook_deliveries (endpoint_id, id)
    WHERE status = 'pending' AND triggered_by = 'test' AND attempts = 0;
  -- Backups the service writes itself (BACKUP_DIR): when the last began, so that of every process on the
  -- file one takes each turn (src/store/sqlite/backup-turn.ts).
  CREATE TABLE backup_schedule (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    began_at INTEGER NOT NULL
  ) STRICT;
  -- Restores (src/store/sqlite/restore.ts): event ids after a backup's last one up to where ids went on
  -- were, or may have been, handed out by the history the restore lost; a feed cursor there is 410.
  CREATE TABLE event_gaps (
    lost_after INTEGER NOT NULL,
    resumed_at INTEGER NOT NULL
  ) STRICT;
  `,
  `
  -- The trace a change was made in (a W3C traceparent; src/store/change-trace.ts), when tracing is on: its
  -- webhook attempts are spans of that trace and send it on. Null for the rest; adding it rewrites no row.
  ALTER TABLE events ADD COLUMN trace TEXT;
  `,
  `
  -- Pets you can correct (docs/decisions.md): each pet's version, its ETag, one more with every change;
  -- existing pets start at 1. A deleted pet's row is removed, and its orders keep their pet_id, so orders
  -- lose the foreign key to pets: SQLite drops a constraint only by making the table anew; its sequence is
  -- carried over, so order ids grow on.
  ALTER TABLE pets ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE orders_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id     INTEGER NOT NULL,
    quantity   INTEGER NOT NULL CHECK (quantity >= 1),
    status     TEXT    NOT NULL CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
    created_at INTEGER NOT NULL
  ) STRICT;
  INSERT INTO orders_new (id, pet_id, quantity, status, created_at)
  SELECT id, pet_id, quantity, status, created_at FROM orders;
  DELETE FROM sqlite_sequence WHERE name = 'orders_new';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'orders_new', seq FROM sqlite_sequence WHERE name = 'orders';
  DROP TABLE orders;
  ALTER TABLE orders_new RENAME TO orders;
  CREATE INDEX orders_status_id ON orders (status, id);
  CREATE INDEX orders_pet_id ON orders (pet_id);
  `,
  `
  -- Events in order per subject (docs/decisions/events-in-order.md). An event's subject, what it is about:
  -- its type's prefix and its data's id (pet/12); null for a test send. Computed from what the row keeps, as
  -- owner is, so nothing that records events changes.
  ALTER TABLE events ADD COLUMN subject TEXT GENERATED ALWAYS AS (CASE
    WHEN substr(type, 1, 4) = 'pet.' THEN 'pet/' || json_extract(data, '$.id')
    WHEN substr(type, 1, 6) = 'order.' THEN 'order/' || json_extract(data, '$.id')
    WHEN substr(type, 1, 17) = 'webhook_endpoint.' THEN 'webhook_endpoint/' || json_extract(data, '$.id')
    END) VIRTUAL;
  -- How an endpoint's deliveries are ordered: by subject (the default, for the endpoints that exist too) or not.
  ALTER TABLE webhook_endpoints ADD COLUMN ordering TEXT NOT NULL DEFAULT 'subject'
    CHECK (ordering IN ('subject', 'none'));
  -- A delivery's subject, copied from its event when fan-out queues it: of an endpoint ordered by subject, a
  -- claim takes a subject's delivery only when no earlier one of that subject is pending (through this
  -- index). Null for test sends. The pending ones queued before take theirs now.
  ALTER TABLE webhook_deliveries ADD COLUMN subject TEXT;
  UPDATE webhook_deliveries SET subject = (SELECT e.subject FROM events e WHERE e.seq = event_seq)
    WHERE status = 'pending' AND triggered_by = 'event';
  CREATE INDEX webhook_deliveries_subject ON webhook_deliveries (endpoint_id, subject, event_seq)
    WHERE status = 'pending' AND triggered_by = 'event';
  -- The log entry of a delivery queued behind an earlier one of its subject: that one's event.
  ALTER TABLE webhook_attempts ADD COLUMN waiting_for INTEGER;
  `,
  `
  -- What the receiver answered, with each attempt (docs/decisions/delivery-answers.md): how long it took, and
  -- the first 4 KiB of its body (or what it was, when not text), flagged when it was longer. Null on log
  -- entries that were no attempt, and on the attempts recorded before.
  ALTER TABLE webhook_attempts ADD COLUMN duration_ms INTEGER;
  ALTER TABLE webhook_attempts ADD COLUMN response_body TEXT;
  ALTER TABLE webhook_attempts ADD COLUMN response_body_truncated INTEGER;
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
    endpoint_id INTEGER PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    starts      TEXT NOT NULL
  );
  `,
  `
  -- The audit log (docs/decisions/audit-log.md): one row per configuration change, written in the change's
  -- own transaction. The actor and the changed fields are JSON; owner is the target's owner (null: the
  -- operator's alone), which a key without admin reads by (owner, id).
  CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
    action      TEXT    NOT NULL,
    actor       TEXT    NOT NULL,
    target_kind TEXT    NOT NULL,
    target_id   TEXT    NOT NULL,
    owner       TEXT,
    changes     TEXT,
    request_id  TEXT
  ) STRICT;
  CREATE INDEX audit_log_owner ON audit_log (owner, id);
  CREATE INDEX audit_log_at ON audit_log (at);
  `,
];
