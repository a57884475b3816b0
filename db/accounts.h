/* Agents, accounts, access tokens, login codes and identities. */
#ifndef ARPS_DB_ACCOUNTS_H
#define ARPS_DB_ACCOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "db/db.h"

struct agent {
	char id[IDS_BUFSZ];
	char name[404];
	char description[4004];
	int has_description;
	char status[16];		/* unclaimed | claimed | suspended */
	char before_suspend[16];	/* status to restore, "" when none */
	char account_id[IDS_BUFSZ];	/* "" when unclaimed */
	int reputation, streak;
	int64_t last_heartbeat;		/* 0: never */
	int64_t created_at;
	int64_t claim_expires_at;	/* written by db_agent_insert only */
};

/* The agent's active participation, if any (study_id "" when none). */
struct agent_current {
	char study_id[IDS_BUFSZ];
	char participation_id[IDS_BUFSZ];
	char status[16];
	int64_t accepted_at;
	/* db_agent_by_key_current only: the bio's embedding is ready, and
	 * the key of the vector (DB_BIO_VEC_KEY_SQL: its text and model) */
	int bio_ready;
	unsigned char bio_hash[32];
	/* db_agent_by_key_heads only (heads 1), as the look-up saw it:
	 * whether the change sequence of open studies holds a row a reader
	 * at its match_seq would read (match/index.c) */
	int heads;
	int change_pending;
};

struct account {
	char id[IDS_BUFSZ];
	char email[256];
	unsigned roles;			/* ROLE_* bits as in fcgi/http.h */
	int64_t created_at;
};

#define ACC_ROLE_RESEARCHER	0x1
#define ACC_ROLE_PARTICIPANT	0x2
#define ACC_ROLE_ADMIN		0x4

/* Agents.  DB_NOTFOUND when there is no such agent. */
enum db_rc db_agent_by_keyhash(struct db *, const unsigned char h[32], struct agent *);
/* The agent of an API key's hash (design.md §9.6): its current key, or its
 * previous key while now < the previous key's end.  The current key's
 * first use after a rotation ends the previous key (a write).  With cur
 * (may be NULL), also the agent's active participation, as
 * db_agent_current: for the current key in the same statement, one round
 * trip (design.md §15). */
enum db_rc db_agent_by_key_current(struct db *, const unsigned char h[32], int64_t now,
    struct agent *, struct agent_current *cur);
/* db_agent_by_key_current, and cur's head for a reader of the change
 * sequence at seq in the same statement (GET /studies/available,
 * design.md §9.12). */
struct match_seq;
enum db_rc db_agent_by_key_heads(struct db *, const unsigned char h[32], int64_t now,
    struct agent *, struct agent_current *cur, const struct match_seq *seq);
/* DB_OK when h is an agent's current key or a previous one within its
 * grace period, DB_NOTFOUND when not; reads only (no grace period ends). */
enum db_rc db_agent_key_known(struct db *, const unsigned char h[32], int64_t now);
/* db_agent_by_key_current without the participation. */
enum db_rc db_agent_by_key(struct db *, const unsigned char h[32], int64_t now, struct agent *);
/* Replace the agent's key: prevhash (may be NULL: none) keeps working
 * until prev_until.  A rotation (prevhash given) happens only when
 * prevhash is the agent's current key: from a key in its grace period it
 * is DB_NOTFOUND, as when there is no such agent. */
enum db_rc db_agent_set_key(struct db *, const char *id, const unsigned char keyhash[32],
    const unsigned char *prevhash, int64_t prev_until);
enum db_rc db_agent_get(struct db *, const char *id, int for_update, struct agent *);
enum db_rc db_agent_insert(struct db *, const struct agent *, const unsigned char keyhash[32],
    const unsigned char claimhash[32], const char *ip);
/* Set name and/or description (NULL: unchanged; clear_desc sets NULL). */
enum db_rc db_agent_update(struct db *, const char *id, const char *name, const char *desc,
    int clear_desc);
/* Record a heartbeat unless one was recorded in the last interval
 * seconds: *ok 1, or 0 with *last set to the previous one. */
enum db_rc db_agent_heartbeat(struct db *, const char *id, int64_t now, int64_t interval,
    int *ok, int64_t *last);
enum db_rc db_agent_current(struct db *, const char *id, struct agent_current *);
/* The same in one round trip with whether the agent has a participation
 * (of any state) in study_id: *took_part 1 or 0. */
enum db_rc db_agent_current_in(struct db *, const char *id, const char *study_id,
    struct agent_current *, int *took_part);
/* Lock the agent whose claim code hash matches and has not expired at now;
 * DB_NOTFOUND when none. */
enum db_rc db_agent_by_claimhash(struct db *, const unsigned char h[32], int64_t now,
    struct agent *);
/* Replace an unclaimed agent's claim code (the old one stops working);
 * DB_NOTFOUND when the agent is claimed or gone, DB_DUP on a hash clash. */
enum db_rc db_agent_claimcode_set(struct db *, const char *agent_id, const unsigned char h[32],
    int64_t expires);
/* Link an agent to an account: status claimed (or, for a suspended agent,
 * the status it returns to). */
enum db_rc db_agent_claim(struct db *, const char *agent_id, const char *account_id);
/* Set status (and the status to restore) for suspend / reinstate. */
enum db_rc db_agent_set_status(struct db *, const char *id, const char *status,
    const char *before);
/* Apply a reputation result. */
enum db_rc db_agent_set_reputation(struct db *, const char *id, int reputation, int streak);

/* Bio: store text, mark its embedding processing. */
enum db_rc db_bio_set(struct db *, const char *agent_id, const char *bio, int64_t now);
/* *bio is malloc'd (NULL when never set); status "none" when no bio. */
enum db_rc db_bio_get(struct db *, const char *agent_id, char **bio, char status[16],
    int64_t *updated_at);

/* Accounts. */
enum db_rc db_account_get(struct db *, const char *id, struct account *);
enum db_rc db_account_by_email(struct db *, const char *email, struct account *);
/* Create an account (and its wallet) with the given roles. */
enum db_rc db_account_create(struct db *, const char *email, unsigned roles, int64_t now,
    struct account *out);
/* Add role (its name) to the roles of account id, or remove it (arps-admin
 * grant / revoke); nothing happens when there is no such account. */
enum db_rc db_account_role_add(struct db *, const char *id, const char *role);
enum db_rc db_account_role_remove(struct db *, const char *id, const char *role);
/* Find or create the account of an e-mail address (locked). */
enum db_rc db_account_for_email(struct db *, const char *email, int64_t now, struct account *out);
/* One agent of an account, with its wallet (zeros when never funded). */
struct acc_agent {
	char	*id, *name, *status;	/* NULL for a NULL cell */
	int64_t	 reputation;
	int64_t	 available, frozen;
};
/* The agents an account has claimed, newest first, in one query: *v
 * malloc'd, *n of them (free with db_acc_agents_free). */
enum db_rc db_account_agents(struct db *, const char *account_id, struct acc_agent **v,
    size_t *n);
void db_acc_agents_free(struct acc_agent *v, size_t n);

/* Access tokens. */
enum db_rc db_token_insert(struct db *, const unsigned char h[32], const char *account_id,
    int64_t now, int64_t expires);
/* Look a token up; DB_NOTFOUND when unknown. */
enum db_rc db_token_lookup(struct db *, const unsigned char h[32], struct account *acc,
    int64_t *expires, int64_t *last_used, int *revoked);
enum db_rc db_token_touch(struct db *, const unsigned char h[32], int64_t now);
enum db_rc db_token_revoke(struct db *, const unsigned char h[32], int64_t now);
/* Revoke every live access token of an account; *n (may be NULL) gets how many. */
enum db_rc db_token_revoke_all(struct db *, const char *account_id, int64_t now, uint64_t *n);

/* Login codes: one row per address (only the latest code is valid). */
enum db_rc db_code_set(struct db *, const char *email, const unsigned char h[32], int64_t now,
    int64_t expires);
/* Lock and read the code of an address; DB_NOTFOUND when none. */
enum db_rc db_code_get(struct db *, const char *email, unsigned char h[32], int64_t *expires,
    int *tries);
enum db_rc db_code_fail(struct db *, const char *email);
enum db_rc db_code_delete(struct db *, const char *email);

/* Identity-provider subjects. */
enum db_rc db_identity_get(struct db *, const char *issuer, const char *subject,
    char account_id[IDS_BUFSZ]);
enum db_rc db_identity_link(struct db *, const char *issuer, const char *subject,
    const char *account_id, int64_t now);

#endif
