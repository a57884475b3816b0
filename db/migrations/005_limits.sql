-- Abuse limits (design.md §9.3): a claim code expires 7 days after issue.
-- Codes issued before this migration get the 7 days from their agent's
-- registration; a re-issued code (POST /agents/me/claim-code) moves it.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS claim_code_expires_at BIGINT NOT NULL DEFAULT 0
  AFTER claim_code_hash;
UPDATE agents SET claim_code_expires_at = created_at + 7 * 86400
  WHERE claim_code_expires_at = 0 AND claim_code_hash IS NOT NULL;
