-- GET /studies/available reads the open studies from this index alone (no
-- row of the table, with its long text columns): status and seq select and
-- order, the rest filters, and the primary key (id) rides along.
ALTER TABLE studies ADD KEY IF NOT EXISTS studies_open
  (status, seq, occupied, max_participants, deadline, created_at);
