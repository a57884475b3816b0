-- Events and webhooks (design.md §11).  An event is written in the same
-- transaction as the change it reports (db/events.c queues them and writes
-- them when the transaction commits).  Each owner (agent or account) numbers
-- its own events 1, 2, 3, ... under the row lock of its event_heads row, so
-- the numbers of one owner are given in commit order: a reader that saw seq N
-- never later finds a new event below N (the feed's cursor never skips).
CREATE TABLE IF NOT EXISTS event_heads (
  owner_id    VARCHAR(20) NOT NULL PRIMARY KEY,
  last_seq    BIGINT NOT NULL,
  CONSTRAINT event_heads_seq CHECK (last_seq >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS events (
  owner_id    VARCHAR(20) NOT NULL,
  seq         BIGINT NOT NULL,               -- the owner's own numbering, from 1
  id          VARCHAR(20) NOT NULL,          -- evt_ + 16 base62
  type        VARCHAR(40) NOT NULL,
  data        TEXT NOT NULL,                 -- a JSON object
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (owner_id, seq),
  UNIQUE KEY events_id (id),
  KEY events_created (created_at),
  KEY events_type (owner_id, type, seq),
  CONSTRAINT events_id_form CHECK (id LIKE 'evt\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A webhook: where to POST the owner's events of the listed types.  The
-- signing secret is sealed (libsodium secretbox, key derived from the
-- pepper), never stored in clear.
CREATE TABLE IF NOT EXISTS webhooks (
  seq           BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id            VARCHAR(20) NOT NULL PRIMARY KEY,
  owner_id      VARCHAR(20) NOT NULL,
  url           VARCHAR(2048) NOT NULL,
  events        VARCHAR(1024) NOT NULL,        -- comma-separated event types
  secret_sealed VARBINARY(128) NOT NULL,       -- nonce || secretbox(secret)
  status        ENUM('active','disabled','deleted') NOT NULL DEFAULT 'active',
  failing_since BIGINT NULL,                   -- first failure since the last success
  created_at    BIGINT NOT NULL,
  disabled_at   BIGINT NULL,
  deleted_at    BIGINT NULL,
  KEY webhooks_owner (owner_id, status, seq),
  CONSTRAINT webhooks_id_form CHECK (id LIKE 'whk\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per (webhook, event) to deliver, queued with the event; each try
-- is counted on it (attempts, last_status).  arps-deliver claims due rows.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  seq             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  webhook_id      VARCHAR(20) NOT NULL,
  event_id        VARCHAR(20) NOT NULL,
  state           ENUM('pending','delivered','failed') NOT NULL DEFAULT 'pending',
  attempts        INT NOT NULL DEFAULT 0,
  created_at      BIGINT NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  claimed_until   BIGINT NULL,
  last_attempt_at BIGINT NULL,
  last_status     INT NULL,                    -- HTTP status of the last try (0: no answer)
  last_error      VARCHAR(255) NULL,
  delivered_at    BIGINT NULL,
  UNIQUE KEY webhook_deliveries_one (webhook_id, event_id),
  KEY webhook_deliveries_due (state, next_attempt_at),
  KEY webhook_deliveries_hook (webhook_id, seq),
  KEY webhook_deliveries_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
