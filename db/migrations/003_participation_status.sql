-- The FULL check after each settled participation asks whether the study
-- still has an accepted or in_progress participation, and a study's counts
-- by state group its participations by status: both read this key, only
-- the study's own rows, instead of scanning a status range of the table.
ALTER TABLE participations ADD KEY IF NOT EXISTS participations_study_status (study_id, status);
