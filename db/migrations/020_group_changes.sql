-- Issue 39: a participant group's membership is part of the listing's
-- change sequence (008_study_changes.sql): a member added or removed appends
-- a row naming the group, so each worker's next listing sees a change
-- pending and re-reads the agents' pasts (which carry their groups) and the
-- eligibility rules it keeps; the fast path then evaluates eligibility in
-- memory, with no statement of its own (design.md §14).  A group's cascaded
-- delete fires no trigger; a group named by an active or paused study cannot
-- be deleted.
CREATE TRIGGER IF NOT EXISTS group_members_chg_ins AFTER INSERT ON group_members FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) VALUES (NEW.group_id, UNIX_TIMESTAMP());
CREATE TRIGGER IF NOT EXISTS group_members_chg_del AFTER DELETE ON group_members FOR EACH ROW
  INSERT INTO study_changes (study_id, changed_at) VALUES (OLD.group_id, UNIX_TIMESTAMP());
