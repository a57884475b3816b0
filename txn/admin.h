/* The operator commands of arps-admin.  Each returns the process exit
 * status: 0 done, 1 refused (with a one-line reason on stderr). */
#ifndef ARPS_TXN_ADMIN_H
#define ARPS_TXN_ADMIN_H

struct db;
struct config;

int admin_migrate(struct db *, const struct config *, char **);
int admin_create_account(struct db *, const struct config *, char **);
int admin_grant(struct db *, const struct config *, char **);
int admin_revoke(struct db *, const struct config *, char **);
int admin_topup(struct db *, const struct config *, char **);
int admin_cashout(struct db *, const struct config *, char **);
/* cashout-paid ID REF / cashout-refuse ID REASON: settle a requested
 * cash-out (POST /wallet/cashouts) once; a second settle is refused (1). */
int admin_cashout_paid(struct db *, const struct config *, char **);
int admin_cashout_refuse(struct db *, const struct config *, char **);
int admin_wallet(struct db *, const struct config *, char **);
int admin_suspend(struct db *, const struct config *, char **);
int admin_reinstate(struct db *, const struct config *, char **);
int admin_verify_ledger(struct db *, const struct config *, char **);

#endif
