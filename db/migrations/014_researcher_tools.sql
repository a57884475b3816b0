-- Researcher tools (design.md §13): rejection categories, bonuses, messages.

-- Why a submission was rejected, shown to the agent and the researcher.
ALTER TABLE participations ADD COLUMN IF NOT EXISTS reject_category
  ENUM('no_code','failed_check','low_effort','incomplete','other') NULL;

-- Bonuses paid for a study (amounts only; the fees are the platform's).
ALTER TABLE studies ADD COLUMN IF NOT EXISTS bonus_cents BIGINT NOT NULL DEFAULT 0;

-- The researcher's `bonus_payment` (amount + fee) and the agent's `bonus`.
ALTER TABLE transactions MODIFY COLUMN type
  ENUM('signup_bonus','study_freeze','platform_fee','study_unfreeze','earning',
       'refund','manual_topup','external_cashout','bonus_payment','bonus') NOT NULL;

-- One row per bonus paid: its ledger entry moved amount + fee from the
-- researcher's available balance (amount to the agent, fee to
-- platform:revenue); verify-ledger ties the three together.  Append-only.
CREATE TABLE IF NOT EXISTS bonuses (
  seq              BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id               VARCHAR(20) NOT NULL PRIMARY KEY,
  study_id         VARCHAR(20) NOT NULL,
  participation_id VARCHAR(20) NOT NULL,
  participant_id   VARCHAR(21) NOT NULL,
  agent_id         VARCHAR(20) NOT NULL,
  researcher_id    VARCHAR(20) NOT NULL,
  amount_cents     BIGINT NOT NULL,
  fee_cents        BIGINT NOT NULL,
  reason           TEXT NULL,
  entry_id         VARCHAR(20) NOT NULL,
  created_at       BIGINT NOT NULL,
  KEY bonuses_study (study_id, seq),
  KEY bonuses_entry (entry_id),
  FOREIGN KEY (study_id) REFERENCES studies (id),
  FOREIGN KEY (participation_id) REFERENCES participations (id),
  CONSTRAINT bonuses_amount CHECK (amount_cents >= 1 AND fee_cents >= 0),
  CONSTRAINT bonuses_id CHECK (id LIKE 'bon\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TRIGGER IF NOT EXISTS bonuses_no_update BEFORE UPDATE ON bonuses
  FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'bonuses is append-only';
CREATE TRIGGER IF NOT EXISTS bonuses_no_delete BEFORE DELETE ON bonuses
  FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'bonuses is append-only';

-- A message's text, written once: a researcher's to many participants, or
-- an agent's reply (reply_to: the message it answers).
CREATE TABLE IF NOT EXISTS messages (
  seq           BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id            VARCHAR(20) NOT NULL PRIMARY KEY,
  study_id      VARCHAR(20) NOT NULL,
  sender        ENUM('researcher','agent') NOT NULL,
  reply_to      VARCHAR(20) NULL,
  body          TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  FOREIGN KEY (study_id) REFERENCES studies (id),
  CONSTRAINT messages_id CHECK (id LIKE 'msg\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Who a message is between: one row per participant it was sent to (or
-- from, for a reply), with the time its reader read it.  The agent's inbox
-- reads (agent_id, seq), the researcher's thread (participation_id, seq).
CREATE TABLE IF NOT EXISTS message_items (
  seq              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  message_id       VARCHAR(20) NOT NULL,
  participation_id VARCHAR(20) NOT NULL,
  agent_id         VARCHAR(20) NOT NULL,
  read_at          BIGINT NULL,
  created_at       BIGINT NOT NULL,
  UNIQUE KEY message_items_one (message_id, agent_id),
  KEY message_items_agent (agent_id, seq),
  KEY message_items_thread (participation_id, seq),
  FOREIGN KEY (message_id) REFERENCES messages (id),
  FOREIGN KEY (participation_id) REFERENCES participations (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
