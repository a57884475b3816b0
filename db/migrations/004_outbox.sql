-- The outbox (design.md §1 and 11): what the workers want sent out,
-- written in the SAME transaction as the request's effect and delivered by
-- arps-deliver, the only process that sends anything.  One table for every
-- kind (mail now, webhook calls later) so that they share the claim and retry
-- machinery:
--   due:      state = 'pending' AND kind = ? AND next_attempt_at <= now (outbox_due);
--   claim:    SELECT ... FOR UPDATE SKIP LOCKED, then claimed_until and
--             next_attempt_at = now + lease, attempts + 1, in one short
--             transaction; a claim that is never marked (a crashed
--             deliverer) is due again once it expires;
--   sent:     state 'sent', sent_at, payload cleared;
--   failure:  next_attempt_at = now + back-off, last_error; past the kind's
--             give-up time state 'dead', payload cleared.
-- payload is sealed (libsodium secretbox, key derived from the pepper): a
-- login code is never stored in clear.  Retention (arps-sweep) deletes sent
-- and dead rows 30 days after.
CREATE TABLE IF NOT EXISTS outbox (
  seq             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id              VARCHAR(40) NOT NULL,          -- message id: msg_ + 16 base62, stable across re-sends
  kind            VARCHAR(16) NOT NULL,          -- 'mail' (later 'webhook')
  ref             VARCHAR(40) NULL,              -- what it belongs to (a webhook id, ...); NULL for mail
  payload         MEDIUMBLOB NULL,               -- nonce || secretbox; NULL once sent or dead
  state           ENUM('pending','sent','dead') NOT NULL DEFAULT 'pending',
  attempts        INT NOT NULL DEFAULT 0,        -- claims so far
  created_at      BIGINT NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  claimed_until   BIGINT NULL,
  sent_at         BIGINT NULL,
  dead_at         BIGINT NULL,
  last_error      VARCHAR(255) NULL,
  UNIQUE KEY outbox_msg_id (id),
  KEY outbox_due (state, kind, next_attempt_at),
  KEY outbox_done (state, sent_at),
  KEY outbox_dead (state, dead_at),
  KEY outbox_ref (kind, ref, seq),
  CONSTRAINT outbox_attempts CHECK (attempts >= 0),
  CONSTRAINT outbox_pending CHECK (state <> 'pending' OR payload IS NOT NULL),
  CONSTRAINT outbox_sent CHECK (state <> 'sent' OR sent_at IS NOT NULL),
  CONSTRAINT outbox_id CHECK (id LIKE 'msg\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Retention (design.md §9.10, db/retention.c) deletes by these times in
-- batches; each batch must find its rows through an index.
ALTER TABLE rate_events ADD KEY IF NOT EXISTS rate_events_at (at);
ALTER TABLE login_codes ADD KEY IF NOT EXISTS login_codes_expires (expires_at);
ALTER TABLE access_tokens ADD KEY IF NOT EXISTS access_tokens_expires (expires_at);
ALTER TABLE access_tokens ADD KEY IF NOT EXISTS access_tokens_revoked (revoked_at);
