/*
 * bench-ceiling: the trivial FastCGI responder of `make bench` (rows 2a and
 * 2b of the bench table, design.md §15).  It shows what this machine allows
 * through the same nginx, the same libfcgi, the same socket kind and the same
 * number of prefork workers as arps-fcgi, doing (almost) nothing:
 *
 *   /bench/fcgi/fixed             a fixed JSON body
 *   /bench/fcgi/select?id=AGENT   one prepared primary-key SELECT of the
 *                                 agents table on the worker's persistent
 *                                 MariaDB connection, its row as JSON
 *
 * It closes a connection exactly as arps-fcgi does (no lingering close when
 * the request's input was read to its end, design.md §15), so a ratio of an
 * arps row to these ceilings compares the application's work only.
 *
 * Usage: bench-ceiling CONFIG SOCKET   (CONFIG: the stack's arps.conf, for
 * workers and db_socket, db_user, db_password, db_name).  SIGTERM stops it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcgiapp.h>
#include <mysql.h>

static char c_sock[512], c_user[128], c_pass[256], c_name[128];
static int c_workers = 4;
static volatile sig_atomic_t got_term;

static void
on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static void
conf_load(const char *path)
{
	char line[1024], *v, *e;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if ((v = strchr(line, '=')) == NULL || line[0] == '#')
			continue;
		for (e = v; e > line && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = '\0';
		for (v++; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\r\n")] = '\0';
		if (strcmp(line, "db_socket") == 0)
			snprintf(c_sock, sizeof c_sock, "%s", v);
		else if (strcmp(line, "db_user") == 0)
			snprintf(c_user, sizeof c_user, "%s", v);
		else if (strcmp(line, "db_password") == 0)
			snprintf(c_pass, sizeof c_pass, "%s", v);
		else if (strcmp(line, "db_name") == 0)
			snprintf(c_name, sizeof c_name, "%s", v);
		else if (strcmp(line, "workers") == 0)
			c_workers = atoi(v);
	}
	fclose(f);
}

struct sel {
	MYSQL *my;
	MYSQL_STMT *st;
	MYSQL_BIND in[1], out[3];
	char id[32], name[128], status[16];
	unsigned long idlen, namelen, statuslen;
	long long rep;
};

static int
sel_open(struct sel *s)
{
	static const char q[] = "SELECT name, status, reputation FROM agents WHERE id = ?";

	memset(s, 0, sizeof *s);
	if ((s->my = mysql_init(NULL)) == NULL)
		return -1;
	mysql_options(s->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (mysql_real_connect(s->my, NULL, c_user, c_pass, c_name, 0, c_sock, 0) == NULL ||
	    (s->st = mysql_stmt_init(s->my)) == NULL ||
	    mysql_stmt_prepare(s->st, q, sizeof q - 1) != 0) {
		fprintf(stderr, "bench-ceiling: %s\n", mysql_error(s->my));
		return -1;
	}
	s->in[0].buffer_type = MYSQL_TYPE_STRING;
	s->in[0].buffer = s->id;
	s->in[0].length = &s->idlen;
	s->out[0].buffer_type = MYSQL_TYPE_STRING;
	s->out[0].buffer = s->name;
	s->out[0].buffer_length = sizeof s->name;
	s->out[0].length = &s->namelen;
	s->out[1].buffer_type = MYSQL_TYPE_STRING;
	s->out[1].buffer = s->status;
	s->out[1].buffer_length = sizeof s->status;
	s->out[1].length = &s->statuslen;
	s->out[2].buffer_type = MYSQL_TYPE_LONGLONG;
	s->out[2].buffer = &s->rep;
	if (mysql_stmt_bind_param(s->st, s->in) != 0 || mysql_stmt_bind_result(s->st, s->out) != 0)
		return -1;
	return 0;
}

/* The body for agent ID into buf; the HTTP status. */
static int
sel_run(struct sel *s, const char *id, char *buf, size_t bufsz)
{
	int rc;

	snprintf(s->id, sizeof s->id, "%s", id);
	s->idlen = strlen(s->id);
	if (mysql_stmt_execute(s->st) != 0) {
		snprintf(buf, bufsz, "{\"error\":\"execute\"}");
		return 500;
	}
	rc = mysql_stmt_fetch(s->st);
	mysql_stmt_free_result(s->st);
	if (rc == MYSQL_NO_DATA) {
		snprintf(buf, bufsz, "{\"error\":\"no such agent\"}");
		return 404;
	}
	if (rc != 0 && rc != MYSQL_DATA_TRUNCATED) {
		snprintf(buf, bufsz, "{\"error\":\"fetch\"}");
		return 500;
	}
	/* names of bench agents need no JSON escaping */
	snprintf(buf, bufsz, "{\"id\":\"%s\",\"name\":\"%.*s\",\"status\":\"%.*s\",\"reputation\":%lld}",
	    s->id, (int)s->namelen, s->name, (int)s->statuslen, s->status, s->rep);
	return 200;
}

static void
worker(int sock)
{
	struct sigaction sa;
	FCGX_Request fx;
	struct sel s;
	char body[512], head[256];
	int hl, status;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (sel_open(&s) != 0)
		_exit(1);
	if (FCGX_InitRequest(&fx, sock, FCGI_FAIL_ACCEPT_ON_INTR) != 0)
		_exit(1);
	while (!got_term && FCGX_Accept_r(&fx) >= 0) {
		const char *uri = FCGX_GetParam("DOCUMENT_URI", fx.envp);
		const char *q = FCGX_GetParam("QUERY_STRING", fx.envp);

		(void)FCGX_GetChar(fx.in);	/* a GET: the end of its (empty) input */
		if (uri != NULL && strcmp(uri, "/bench/fcgi/select") == 0 && q != NULL &&
		    strncmp(q, "id=", 3) == 0)
			status = sel_run(&s, q + 3, body, sizeof body);
		else if (uri != NULL && strcmp(uri, "/bench/fcgi/fixed") == 0) {
			snprintf(body, sizeof body, "{\"status\":\"ok\"}");
			status = 200;
		} else {
			snprintf(body, sizeof body, "{\"error\":\"not found\"}");
			status = 404;
		}
		hl = snprintf(head, sizeof head, "Status: %d\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nCache-Control: no-store\r\n\r\n", status, strlen(body));
		FCGX_PutStr(head, hl, fx.out);
		FCGX_PutStr(body, (int)strlen(body), fx.out);
		if (FCGX_HasSeenEOF(fx.in) == EOF)
			FCGX_Detach(&fx);	/* as arps-fcgi: no lingering close */
		fx.keepConnection = 0;		/* as arps-fcgi: closed after the answer */
		FCGX_Finish_r(&fx);
	}
	mysql_stmt_close(s.st);
	mysql_close(s.my);
	_exit(0);
}

int
main(int argc, char **argv)
{
	pid_t pids[64];
	int sock, i, n;
	sigset_t none;
	struct sigaction sa;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-ceiling CONFIG SOCKET\n");
		return 2;
	}
	conf_load(argv[1]);
	n = c_workers < 1 ? 1 : c_workers > 64 ? 64 : c_workers;
	if (FCGX_Init() != 0)
		return 1;
	unlink(argv[2]);
	umask(0117);
	if ((sock = FCGX_OpenSocket(argv[2], 1024)) < 0) {
		fprintf(stderr, "bench-ceiling: cannot listen on %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (i = 0; i < n; i++)
		if ((pids[i] = fork()) == 0)
			worker(sock);
	sigemptyset(&none);
	while (!got_term)
		sigsuspend(&none);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	unlink(argv[2]);
	return 0;
}
