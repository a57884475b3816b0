-- API key lifecycle (design.md §9.6).  A rotated key keeps working as the
-- previous key until api_key_prev_until or until the new key is first
-- used, whichever is sooner; an owner's revocation leaves no previous key.
-- Keys are stored only as keyed hashes (lib/secret.h).
ALTER TABLE agents
  ADD COLUMN IF NOT EXISTS api_key_prev_hash BINARY(32) NULL AFTER api_key_hash,
  ADD COLUMN IF NOT EXISTS api_key_prev_until BIGINT NULL AFTER api_key_prev_hash,
  ADD UNIQUE KEY IF NOT EXISTS agents_api_key_prev (api_key_prev_hash);
