-- The change sequence of open studies (design.md §9.12): every change that
-- can move a study into or out of GET /studies/available's index (status,
-- slots, deadline, creation time, a criteria embedding becoming ready or
-- not, a study row deleted) appends one row here, from triggers, in the
-- transaction of the change.  Each pool worker keeps an in-memory index of
-- the open studies and reads only the rows after the last it saw
-- (fcgi/match.c explains how it never misses one that commits late).
-- Rows are kept one hour (db/retention.c); a worker further behind reloads.
CREATE TABLE IF NOT EXISTS study_changes (
  seq         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  study_id    VARCHAR(20) NOT NULL,
  changed_at  BIGINT NOT NULL,
  KEY study_changes_at (changed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TRIGGER IF NOT EXISTS studies_chg_ins AFTER INSERT ON studies FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) VALUES (NEW.id, UNIX_TIMESTAMP());
CREATE TRIGGER IF NOT EXISTS studies_chg_upd AFTER UPDATE ON studies FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) SELECT NEW.id, UNIX_TIMESTAMP() FROM DUAL
  WHERE NOT (NEW.status <=> OLD.status AND NEW.occupied <=> OLD.occupied
    AND NEW.max_participants <=> OLD.max_participants AND NEW.deadline <=> OLD.deadline
    AND NEW.created_at <=> OLD.created_at);
CREATE TRIGGER IF NOT EXISTS studies_chg_del AFTER DELETE ON studies FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) VALUES (OLD.id, UNIX_TIMESTAMP());
CREATE TRIGGER IF NOT EXISTS embeddings_chg_upd AFTER UPDATE ON embeddings FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) SELECT NEW.subject_id, UNIX_TIMESTAMP()
  FROM DUAL WHERE NEW.subject_id LIKE 'std\_%'
    AND NOT (NEW.status <=> OLD.status AND NEW.vector <=> OLD.vector);
CREATE TRIGGER IF NOT EXISTS embeddings_chg_ins AFTER INSERT ON embeddings FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) SELECT NEW.subject_id, UNIX_TIMESTAMP()
  FROM DUAL WHERE NEW.subject_id LIKE 'std\_%';
