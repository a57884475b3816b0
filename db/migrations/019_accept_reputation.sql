-- Issue 37: a participant item's tier is the one the agent had when it
-- accepted (the researcher reviews who took part, not who the agent is
-- today). NULL for participations from before this column.
ALTER TABLE participations ADD COLUMN IF NOT EXISTS accept_reputation INT NULL;
