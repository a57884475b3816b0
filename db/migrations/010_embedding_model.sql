-- The model a vector was computed by (design.md §7.4): arps-embed stores its
-- model's tag (name and a hash of the model file) with every vector, and on
-- a tag it does not know puts the row back to 'processing', so ranking never
-- mixes two models' vectors.  Rows written before this migration have ''.
ALTER TABLE embeddings ADD COLUMN IF NOT EXISTS model VARCHAR(64) NOT NULL DEFAULT '';
-- A round looks for rows of another tag: two ranges of this index, not a scan.
CREATE INDEX IF NOT EXISTS embeddings_model ON embeddings (model, status);
