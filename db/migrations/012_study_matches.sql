-- study.matched waiting for its release (design.md §7.5): arps-embed picks
-- the best `matched_fanout` agents of a newly published study from its
-- index of bio vectors; a priority agent's event is written at once, the
-- others' wait here until release_at (the study's publication plus
-- first_access_minutes).  arps-embed releases a due row in one transaction
-- that deletes it and writes the event, so the event is created (and
-- numbered in the agent's feed) when the agent may see the study, never in
-- the past of a cursor.
CREATE TABLE IF NOT EXISTS study_matches (
  study_id    VARCHAR(20) NOT NULL,
  agent_id    VARCHAR(20) NOT NULL,
  score       DOUBLE NOT NULL,
  release_at  BIGINT NOT NULL,
  PRIMARY KEY (study_id, agent_id),
  KEY study_matches_due (release_at)
) ENGINE=InnoDB;
