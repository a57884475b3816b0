/*
 * The worker's guard against a database that stops answering (each
 * worker holds one MariaDB connection, reconnecting on loss: design.md §1).
 * A server that is down refuses the connection at once; one that is
 * frozen (stopped by a signal, a host that hangs) accepts bytes and never
 * answers, and a lock wait or a slow statement looks the same from the
 * socket.  The guard tells them apart: a thread watches the statement in
 * flight and, once it has waited GUARD_STALL_MS, opens a second
 * connection to the same server; a live server greets it at once (even
 * while the first statement waits for a lock), a frozen one does not
 * within GUARD_PROBE_MS, and then the guard shuts the worker's socket so
 * the statement fails as a lost connection (503, never a hang).
 */
#ifndef ARPS_DB_GUARD_H
#define ARPS_DB_GUARD_H

#define GUARD_STALL_MS	600
#define GUARD_PROBE_MS	700

struct guard;

/* Start the watching thread; NULL when it cannot be started. */
struct guard *guard_start(void);
/* A statement starts on socket fd / has ended (or the socket is closed). */
void guard_enter(struct guard *g, int fd);
void guard_leave(struct guard *g);

#endif
