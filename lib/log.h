/*
 * One logger for every binary: one line per call to stderr (journald keeps it).
 * Convention of lib/ (design.md §2.3): 0, or -1 with the reason in the
 * caller's err buffer (or where the function says); bool for a predicate.
 */
#ifndef ARPS_LIB_LOG_H
#define ARPS_LIB_LOG_H

#include <sys/types.h>

/* Set the program name shown on each line. */
void log_init(const char *prog);
/* This process's pid, kept (a fork's child reads its own). */
pid_t log_pid(void);
/* Write one line: "<iso-time> <prog>[pid]: <message>".  Never log a secret. */
void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
