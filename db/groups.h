/*
 * Who may take part (design.md §14): a researcher's participant groups and
 * their members, a study's eligibility rows and its completion codes.
 * Return convention: enum db_rc (db/db.h).  Structs filled here own heap
 * strings: release with the *_clear / *_free functions (NULL is fine).
 */
#ifndef ARPS_DB_GROUPS_H
#define ARPS_DB_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "db/db.h"
#include "db/studies.h"

struct group {
	int64_t		 seq;
	char		 id[IDS_BUFSZ];
	char		 researcher_id[IDS_BUFSZ];
	char		*name, *description;	/* description NULL when none */
	int64_t		 member_count, created_at;
};

struct group_member {
	int64_t		 seq;
	char		 agent_id[IDS_BUFSZ];
	char		 pseudonym[PSN_BUFSZ];
	int64_t		 added_at;
};

void db_group_clear(struct group *);
void db_groups_free(struct group *, size_t n);

/* Insert group id of owner.  DB_DUP on an id clash. */
enum db_rc db_group_insert(struct db *, const char *id, const char *owner, const char *name,
    const char *description, int64_t now);
/* Group id when owner owns it (locked when for_update), else DB_NOTFOUND. */
enum db_rc db_group_get(struct db *, const char *id, const char *owner, int for_update,
    struct group *g);
/* owner's groups newest first, paged as design.md §6.15; *v malloc'd. */
enum db_rc db_group_list(struct db *, const char *owner, int64_t cursor, int64_t limit,
    struct group **v, size_t *n, int64_t *next);
/* name and description (each NULL: kept; clear_desc: description NULL). */
enum db_rc db_group_update(struct db *, const char *id, const char *name,
    const char *description, int clear_desc);
/* Delete the group and its members. */
enum db_rc db_group_delete(struct db *, const char *id);
/* *named 1 when an active or paused study's eligibility names group id. */
enum db_rc db_group_named_open(struct db *, const char *id, int *named);
/* Add a member (nothing when it is one already: *added 0); the count
 * follows. */
enum db_rc db_group_member_add(struct db *, const char *group_id, const char *agent_id,
    const char *pseudonym, int64_t now, int *added);
/* Remove the member of that pseudonym: *removed 0 when it is none. */
enum db_rc db_group_member_remove(struct db *, const char *group_id, const char *pseudonym,
    int *removed);
/* A group's members newest first, paged; *v malloc'd (free()). */
enum db_rc db_group_members(struct db *, const char *group_id, int64_t cursor, int64_t limit,
    struct group_member **v, size_t *n, int64_t *next);
/* The agents that took part (any state) in any study of owner: *ids
 * malloc'd (free()), *n of them. */
enum db_rc db_owner_participants(struct db *, const char *owner, char (**ids)[IDS_BUFSZ],
    size_t *n);
/* The agent of participant_id in study_id when owner owns the study:
 * agent_id filled, else DB_NOTFOUND. */
enum db_rc db_owner_participant_agent(struct db *, const char *owner, const char *study_id,
    const char *participant_id, char agent_id[IDS_BUFSZ]);

/* --- a study's rules --- */

/* Replace study_id's eligibility rows by e (NULL: none) and set its
 * studies.eligibility flag. */
enum db_rc db_study_elig_set(struct db *, const char *study_id, const struct study_elig *e);
/* Read study_id's eligibility rows into *e (zeroed first). */
enum db_rc db_study_elig_get(struct db *, const char *study_id, struct study_elig *e);
/* One eligibility rule of a study (the listing keeps them, match/cache.c). */
struct elig_rule {
	enum elig_kind		 kind;
	char			 ref[IDS_BUFSZ];
};
/* The rules of ids[0..n) (n <= DB_RULES_BATCH) in one statement: out[i] a
 * malloc'd array of nout[i] rules, NULL when it has none (caller frees). */
#define DB_RULES_BATCH	32
enum db_rc db_study_rules_many(struct db *, const char *const *ids, size_t n,
    struct elig_rule **out, size_t *nout);
/* Insert study_id's completion codes (c->n rows). */
enum db_rc db_study_codes_insert(struct db *, const char *study_id, const struct study_codes *c);
/* Read study_id's completion codes into *c (zeroed first), in order. */
enum db_rc db_study_codes_get(struct db *, const char *study_id, struct study_codes *c);
/* The row of study_id's code `code` into *out; DB_NOTFOUND when none. */
enum db_rc db_study_code_find(struct db *, const char *study_id, const char *code,
    struct study_code *out);

#endif
