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
];
