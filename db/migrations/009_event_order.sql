-- Event ids in commit order (design.md §11.4): an event id is evt_, then
-- 9 base62 digits of a per-owner counter of microseconds, then 7 random
-- base62 characters, so one owner's ids sort as its feed does and a
-- webhook receiver that orders deliveries by created_at and id gets the
-- feed's order.  last_us is the counter's newest value: the head upsert
-- moves it to at least the commit's clock time and always past the
-- previous flush's (a clock that steps back cannot reorder ids).
ALTER TABLE event_heads ADD COLUMN IF NOT EXISTS last_us BIGINT NOT NULL DEFAULT 0;
