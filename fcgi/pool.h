/* The prefork pool: a master that forks, reaps, respawns and recycles
 * workers, each running the FastCGI accept loop. */
#ifndef ARPS_FCGI_POOL_H
#define ARPS_FCGI_POOL_H

struct config;

/*
 * Open the listening socket (or take fd 0 from systemd when listen is
 * "fd0"), fork cfg->workers workers and supervise them until SIGTERM or
 * SIGINT, then let in-flight requests finish.  Returns the exit status.
 */
int pool_run(const struct config *cfg);

#endif
