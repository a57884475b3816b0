-- Issue 37: every change of a wallet's total has a row on that wallet.
-- study_payment: the researcher's side of an approval (reward + fee paid
-- from the frozen budget; informational for available, as platform_fee).
-- cashout_request / cashout_refund: a cash-out request leaves available
-- for platform:cashouts, and a refused one comes back (docs/api.md §9).
ALTER TABLE transactions MODIFY type
  ENUM('signup_bonus','study_freeze','platform_fee','study_unfreeze','earning',
       'refund','manual_topup','external_cashout','study_payment','cashout_request',
       'cashout_refund') NOT NULL;

-- Cash-out requests (POST /wallet/cashouts): the account that asked, the
-- wallet the money left (the account's or one of its agents'), and how the
-- operator settled it (arps-admin cashout-paid / cashout-refuse).
CREATE TABLE IF NOT EXISTS cashouts (
  seq          BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  id           VARCHAR(20) NOT NULL PRIMARY KEY,
  account_id   VARCHAR(20) NOT NULL,
  wallet_id    VARCHAR(20) NOT NULL,
  amount_cents BIGINT NOT NULL,
  status       ENUM('requested','paid','refused') NOT NULL DEFAULT 'requested',
  reference    VARCHAR(200) NULL,
  reason       VARCHAR(500) NULL,
  created_at   BIGINT NOT NULL,
  settled_at   BIGINT NULL,
  KEY (account_id, seq),
  KEY (status, seq),
  CONSTRAINT cashouts_id CHECK (id LIKE 'cot\_%'),
  CONSTRAINT cashouts_amount CHECK (amount_cents > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
