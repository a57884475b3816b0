/* The prefork pool: a master that forks, reaps, respawns and recycles
 * workers, each running the FastCGI accept loop. */
#ifndef ARPS_FCGI_POOL_H
#define ARPS_FCGI_POOL_H

struct config;

/*
 * Open the listening socket (or take fd 0 from systemd when listen is
 * "fd0"), fork cfg->workers workers and supervise them until SIGTERM or
 * SIGINT, then let in-flight requests finish.  Returns the exit status.
 * SIGHUP re-reads cfg->path: when it loads, *cfg takes the new values
 * (but listen and model_path, which need a restart) and every worker is
 * replaced gracefully, each finishing its request in flight first; when
 * it does not load, the reason is logged and nothing changes.
 */
int pool_run(struct config *cfg);

#endif
