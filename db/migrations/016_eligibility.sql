-- Who may take part (design.md §14): participant groups, study
-- eligibility, completion codes with actions, screen-outs, return requests.

-- A researcher's named set of participants.  member_count is kept with
-- the members (under the group's row lock).
CREATE TABLE IF NOT EXISTS participant_groups (
  seq           BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id            VARCHAR(20) NOT NULL PRIMARY KEY,
  researcher_id VARCHAR(20) NOT NULL,
  name          VARCHAR(400) NOT NULL,
  description   TEXT NULL,
  member_count  BIGINT NOT NULL DEFAULT 0,
  created_at    BIGINT NOT NULL,
  KEY participant_groups_owner (researcher_id, seq),
  FOREIGN KEY (researcher_id) REFERENCES accounts (id),
  CONSTRAINT participant_groups_id CHECK (id LIKE 'grp\_%')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A member: the agent (what eligibility checks) and its pseudonym for the
-- group's researcher (what the researcher sees, design.md §13).
CREATE TABLE IF NOT EXISTS group_members (
  seq        BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  group_id   VARCHAR(20) NOT NULL,
  agent_id   VARCHAR(20) NOT NULL,
  pseudonym  VARCHAR(24) NOT NULL,
  added_at   BIGINT NOT NULL,
  UNIQUE KEY group_members_agent (group_id, agent_id),
  UNIQUE KEY group_members_psn (group_id, pseudonym),
  FOREIGN KEY (group_id) REFERENCES participant_groups (id) ON DELETE CASCADE,
  FOREIGN KEY (agent_id) REFERENCES agents (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A study's eligibility rules: one row per group or study named.
-- studies.eligibility is 1 when the study has any, so the listing pays
-- for the rules only on the studies that carry them.
CREATE TABLE IF NOT EXISTS study_eligibility (
  study_id  VARCHAR(20) NOT NULL,
  kind      ENUM('include_group','exclude_group','exclude_study') NOT NULL,
  ref_id    VARCHAR(20) NOT NULL,
  pos       INT NOT NULL,
  PRIMARY KEY (study_id, kind, ref_id),
  KEY study_eligibility_ref (ref_id, kind),
  FOREIGN KEY (study_id) REFERENCES studies (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Completion codes with actions; a study's legacy completion_code is its
-- one `review` row (copied below for studies made before this).
CREATE TABLE IF NOT EXISTS study_codes (
  study_id  VARCHAR(20) NOT NULL,
  pos       INT NOT NULL,
  code      VARCHAR(256) NOT NULL,
  action    ENUM('approve','review','reject','screen_out') NOT NULL,
  group_id  VARCHAR(20) NULL,
  PRIMARY KEY (study_id, code),
  UNIQUE KEY study_codes_pos (study_id, pos),
  FOREIGN KEY (study_id) REFERENCES studies (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT IGNORE INTO study_codes (study_id, pos, code, action)
  SELECT id, 0, completion_code, 'review' FROM studies WHERE completion_code IS NOT NULL;

ALTER TABLE studies ADD COLUMN IF NOT EXISTS eligibility TINYINT NOT NULL DEFAULT 0;
ALTER TABLE studies ADD COLUMN IF NOT EXISTS screen_out_cents BIGINT NOT NULL DEFAULT 0;
-- its fee, fixed at creation as the reward's is
ALTER TABLE studies ADD COLUMN IF NOT EXISTS screen_out_fee_cents BIGINT NOT NULL DEFAULT 0;
-- a screen-out the researcher cannot fund again leaves the study one
-- place less (LEDGER_EV_SCREEN_OUT_SHRINK): a study may end with none
ALTER TABLE studies DROP CONSTRAINT IF EXISTS studies_max;
ALTER TABLE studies ADD CONSTRAINT studies_max CHECK (max_participants >= 0);
ALTER TABLE studies MODIFY COLUMN completion_code VARCHAR(256) NULL;

ALTER TABLE participations MODIFY COLUMN status
  ENUM('accepted','in_progress','submitted','approved','rejected','withdrawn','timed_out',
       'screened_out') NOT NULL DEFAULT 'accepted';
ALTER TABLE participations ADD COLUMN IF NOT EXISTS return_requested_at BIGINT NULL;
ALTER TABLE participations ADD COLUMN IF NOT EXISTS return_reason TEXT NULL;

-- The index of open studies keeps the eligibility flag: its change is a
-- change of the study (008_study_changes.sql's trigger, one column more).
DROP TRIGGER IF EXISTS studies_chg_upd;
CREATE TRIGGER studies_chg_upd AFTER UPDATE ON studies FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) SELECT NEW.id, UNIX_TIMESTAMP() FROM DUAL
  WHERE NOT (NEW.status <=> OLD.status AND NEW.occupied <=> OLD.occupied
    AND NEW.max_participants <=> OLD.max_participants AND NEW.deadline <=> OLD.deadline
    AND NEW.created_at <=> OLD.created_at AND NEW.eligibility <=> OLD.eligibility);
