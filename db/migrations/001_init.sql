-- arps data model.  Times are BIGINT unix seconds (UTC); money is BIGINT cents.
-- Every table has an internal seq for stable newest-first ordering (design.md §6.19).
-- The keys and CHECKs below make the database itself refuse what the rules forbid.

CREATE TABLE IF NOT EXISTS accounts (
  seq         BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id          VARCHAR(20) NOT NULL PRIMARY KEY,
  email       VARCHAR(254) NULL,
  roles       SET('researcher','participant','admin') NOT NULL DEFAULT 'researcher,participant',
  created_at  BIGINT NOT NULL,
  UNIQUE KEY accounts_email (email),
  CONSTRAINT accounts_id CHECK (id LIKE 'acc\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Identity-provider subjects linked to an account (issuer + subject unique).
CREATE TABLE IF NOT EXISTS account_identities (
  issuer      VARCHAR(255) NOT NULL,
  subject     VARCHAR(255) NOT NULL,
  account_id  VARCHAR(20) NOT NULL,
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (issuer, subject),
  KEY (account_id),
  FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS agents (
  seq             BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id              VARCHAR(20) NOT NULL PRIMARY KEY,
  name            VARCHAR(100) NOT NULL,
  description     TEXT NULL,
  api_key_hash    BINARY(32) NOT NULL,
  claim_code_hash BINARY(32) NULL,
  status          ENUM('unclaimed','claimed','suspended') NOT NULL DEFAULT 'unclaimed',
  status_before_suspend ENUM('unclaimed','claimed') NULL,
  account_id      VARCHAR(20) NULL,
  reputation      INT NOT NULL DEFAULT 50,
  streak          INT NOT NULL DEFAULT 0,
  last_heartbeat  BIGINT NULL,
  bio             TEXT NULL,
  bio_updated_at  BIGINT NULL,
  created_ip      VARCHAR(64) NOT NULL DEFAULT '',
  created_at      BIGINT NOT NULL,
  UNIQUE KEY agents_api_key (api_key_hash),
  UNIQUE KEY agents_claim_code (claim_code_hash),
  KEY (account_id),
  FOREIGN KEY (account_id) REFERENCES accounts (id),
  CONSTRAINT agents_reputation CHECK (reputation BETWEEN 0 AND 100),
  CONSTRAINT agents_streak CHECK (streak >= 0),
  CONSTRAINT agents_claimed CHECK (status = 'unclaimed' OR account_id IS NOT NULL
                                   OR status_before_suspend = 'unclaimed'),
  CONSTRAINT agents_id CHECK (id LIKE 'agt\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS access_tokens (
  token_hash   BINARY(32) NOT NULL PRIMARY KEY,
  account_id   VARCHAR(20) NOT NULL,
  created_at   BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL,
  revoked_at   BIGINT NULL,
  KEY (account_id),
  FOREIGN KEY (account_id) REFERENCES accounts (id)
) ENGINE=InnoDB;

-- Only the latest code per address is valid: one row per address.
CREATE TABLE IF NOT EXISTS login_codes (
  email       VARCHAR(254) NOT NULL PRIMARY KEY,
  code_hash   BINARY(32) NOT NULL,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  tries       INT NOT NULL DEFAULT 0,
  CONSTRAINT login_codes_tries CHECK (tries BETWEEN 0 AND 5)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Exact rolling-window limits shared by all workers.  A request locks its
-- bucket row (rate_buckets) and counts its events (rate_events).
CREATE TABLE IF NOT EXISTS rate_buckets (
  bucket      VARBINARY(96) NOT NULL PRIMARY KEY
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS rate_events (
  seq         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  bucket      VARBINARY(96) NOT NULL,
  at          BIGINT NOT NULL,
  KEY (bucket, at)
) ENGINE=InnoDB;

-- One wallet per agent or account; balances are the cache of the postings.
CREATE TABLE IF NOT EXISTS wallets (
  owner_id        VARCHAR(20) NOT NULL PRIMARY KEY,
  available_cents BIGINT NOT NULL DEFAULT 0,
  frozen_cents    BIGINT NOT NULL DEFAULT 0,
  CONSTRAINT wallets_available CHECK (available_cents >= 0),
  CONSTRAINT wallets_frozen CHECK (frozen_cents >= 0)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS studies (
  seq                 BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id                  VARCHAR(20) NOT NULL PRIMARY KEY,
  researcher_id       VARCHAR(20) NOT NULL,
  title               VARCHAR(200) NOT NULL,
  description         TEXT NOT NULL,
  study_url           VARCHAR(2048) NOT NULL,
  reward_cents        BIGINT NOT NULL,
  fee_cents           BIGINT NOT NULL,
  max_participants    INT NOT NULL,
  screening_criteria  TEXT NOT NULL,
  duration_minutes    INT NOT NULL,
  deadline            BIGINT NULL,
  completion_code     VARCHAR(64) NULL,
  status              ENUM('active','paused','awaiting_review','completed') NOT NULL DEFAULT 'active',
  occupied            INT NOT NULL DEFAULT 0,
  frozen_cents        BIGINT NOT NULL,
  spent_cents         BIGINT NOT NULL DEFAULT 0,
  refunded_cents      BIGINT NOT NULL DEFAULT 0,
  refunded_slots      INT NOT NULL DEFAULT 0,
  created_at          BIGINT NOT NULL,
  closed_at           BIGINT NULL,
  completed_at        BIGINT NULL,
  KEY (researcher_id, seq),
  KEY (status, seq),
  KEY (status, deadline),
  FOREIGN KEY (researcher_id) REFERENCES accounts (id),
  CONSTRAINT studies_reward CHECK (reward_cents >= 1),
  CONSTRAINT studies_fee CHECK (fee_cents >= 0),
  CONSTRAINT studies_max CHECK (max_participants >= 1),
  CONSTRAINT studies_occupied CHECK (occupied BETWEEN 0 AND max_participants),
  CONSTRAINT studies_refunded CHECK (refunded_slots BETWEEN 0 AND max_participants),
  CONSTRAINT studies_money CHECK (frozen_cents >= 0 AND spent_cents >= 0 AND refunded_cents >= 0),
  CONSTRAINT studies_completed CHECK (status <> 'completed' OR frozen_cents = 0),
  CONSTRAINT studies_id CHECK (id LIKE 'std\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS participations (
  seq             BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id              VARCHAR(20) NOT NULL PRIMARY KEY,
  study_id        VARCHAR(20) NOT NULL,
  agent_id        VARCHAR(20) NOT NULL,
  participant_id  VARCHAR(21) NOT NULL,
  status          ENUM('accepted','in_progress','submitted','approved','rejected',
                       'withdrawn','timed_out') NOT NULL DEFAULT 'accepted',
  accepted_at     BIGINT NOT NULL,
  started_at      BIGINT NULL,
  submitted_at    BIGINT NULL,
  reviewed_at     BIGINT NULL,
  ended_at        BIGINT NULL,
  reason          TEXT NULL,
  -- Equal to agent_id while the participation is active, else NULL: the
  -- unique key allows at most one active participation per agent.
  active_agent    VARCHAR(20) AS (IF(status IN ('accepted','in_progress'), agent_id, NULL)) PERSISTENT,
  UNIQUE KEY participations_one_active (active_agent),
  UNIQUE KEY participations_once (study_id, agent_id),
  UNIQUE KEY participations_anon (study_id, participant_id),
  KEY (agent_id, seq),
  KEY (study_id, seq),
  KEY (status, accepted_at),
  KEY (status, submitted_at),
  FOREIGN KEY (study_id) REFERENCES studies (id),
  FOREIGN KEY (agent_id) REFERENCES agents (id),
  CONSTRAINT participations_id CHECK (id LIKE 'prt\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Double entry: each money event is one entry of postings summing to zero.
-- account: a wallet owner id with sub-account, or a platform account.
CREATE TABLE IF NOT EXISTS ledger_postings (
  seq         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  entry_id    VARCHAR(20) NOT NULL,
  account     VARCHAR(40) NOT NULL,
  sub         ENUM('available','frozen','platform') NOT NULL,
  amount      BIGINT NOT NULL,
  study_id    VARCHAR(20) NULL,
  event       VARCHAR(32) NOT NULL,
  created_at  BIGINT NOT NULL,
  KEY (entry_id),
  KEY (account, sub),
  KEY (study_id),
  CONSTRAINT ledger_nonzero CHECK (amount <> 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TRIGGER IF NOT EXISTS ledger_no_update BEFORE UPDATE ON ledger_postings
  FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ledger_postings is append-only';
CREATE TRIGGER IF NOT EXISTS ledger_no_delete BEFORE DELETE ON ledger_postings
  FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ledger_postings is append-only';

-- The typed, user-visible transactions.
CREATE TABLE IF NOT EXISTS transactions (
  seq          BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id           VARCHAR(20) NOT NULL PRIMARY KEY,
  owner_id     VARCHAR(20) NOT NULL,
  type         ENUM('signup_bonus','study_freeze','platform_fee','study_unfreeze','earning',
                    'refund','manual_topup','external_cashout') NOT NULL,
  amount_cents BIGINT NOT NULL,
  study_id     VARCHAR(20) NULL,
  entry_id     VARCHAR(20) NOT NULL,
  description  VARCHAR(500) NOT NULL,
  created_at   BIGINT NOT NULL,
  KEY (owner_id, seq),
  KEY (owner_id, type, seq),
  CONSTRAINT transactions_id CHECK (id LIKE 'txn\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TRIGGER IF NOT EXISTS transactions_no_update BEFORE UPDATE ON transactions
  FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'transactions is append-only';
CREATE TRIGGER IF NOT EXISTS transactions_no_delete BEFORE DELETE ON transactions
  FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'transactions is append-only';

-- Idempotency-Key records: the first answer, stored in the effect's transaction.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  principal    VARCHAR(80) NOT NULL,
  idem_key     VARBINARY(255) NOT NULL,
  request_hash BINARY(32) NOT NULL,
  state        ENUM('in_flight','done') NOT NULL DEFAULT 'in_flight',
  status       INT NULL,
  body         MEDIUMBLOB NULL,
  created_at   BIGINT NOT NULL,
  PRIMARY KEY (principal, idem_key),
  KEY (created_at)
) ENGINE=InnoDB;

-- Embeddings of bios (subject agt_) and screening criteria (subject std_).
CREATE TABLE IF NOT EXISTS embeddings (
  subject_id  VARCHAR(20) NOT NULL PRIMARY KEY,
  status      ENUM('processing','ready','failed') NOT NULL DEFAULT 'processing',
  text_hash   BINARY(32) NOT NULL,
  vector      BLOB NULL,
  error       VARCHAR(255) NULL,
  attempts    INT NOT NULL DEFAULT 0,
  updated_at  BIGINT NOT NULL,
  KEY (status, updated_at),
  CONSTRAINT embeddings_ready CHECK (status <> 'ready' OR vector IS NOT NULL)
) ENGINE=InnoDB;
