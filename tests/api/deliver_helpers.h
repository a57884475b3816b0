/* arps-deliver for the delivery suites (test_deliver, test_deliver_kill,
 * test_webhooks): the stack's own deliverer stopped and started again,
 * deliverers of a test's own on a copy of the config, fake transports. */
#ifndef ARPS_TESTS_API_DELIVER_HELPERS_H
#define ARPS_TESTS_API_DELIVER_HELPERS_H

#include <stddef.h>
#include <sys/types.h>

/* $ARPS_VAR, the stack's directory. */
const char *var_dir(void);
/* Stop the stack's own deliverer (tools/dev.sh, var/run/arps-deliver.pid);
 * asserts it stopped. */
void stack_deliver_stop(void);
/* Start it again unless it runs; 0 when it does.  A cmocka teardown, so
 * the next test has its mail whether this one passed or not. */
int stack_deliver_start(void **state);
/* The stack's config plus extra lines (the last value of a key wins), as
 * VAR/name.conf; its path into path. */
void conf_with(char *path, size_t n, const char *name, const char *extra);
/* An executable script at VAR/name holding text; its path into path. */
void script(char *path, size_t n, const char *name, const char *text);
/* An arps-deliver of our own with conf; its log goes to log/deliver-test.log. */
pid_t deliver_spawn(const char *conf);
/* Send sig to pid and wait for it; its wait status. */
int reap(pid_t pid, int sig);

#endif
