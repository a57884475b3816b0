/*
 * arps-admin setup-db, the installer (see setup.h): the passwords and the
 * credential files here, the statements as root in db/setup.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "db/db.h"
#include "admin/setup.h"
#include "db/setup.h"
#include "lib/config.h"

#define PW_HEX 48		/* 24 random bytes */
#define DEFAULT_SOCKET "/run/mysqld/mysqld.sock"


struct cred {
	const char *user;
	char password[CONFIG_STR];
	const char *state;	/* "kept", "new", "rotated" */
};

static int
refuse(const char *fmt, ...)
{
	va_list ap;

	fputs("arps-admin: setup-db: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int
password_ok(const char *s)
{
	return strlen(s) >= 16 && strlen(s) < CONFIG_STR &&
	    strspn(s, "0123456789abcdef") == strlen(s);
}

static void
newpassword(char out[CONFIG_STR])
{
	unsigned char raw[PW_HEX / 2];

	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(out, CONFIG_STR, raw, sizeof raw);
	sodium_memzero(raw, sizeof raw);
}

/* dir/name for the file beside the config at cfgpath. */
static void
beside(const char *cfgpath, const char *name, char *out, size_t outsz)
{
	const char *slash = strrchr(cfgpath, '/');

	if (slash == NULL)
		snprintf(out, outsz, "%s", name);
	else
		snprintf(out, outsz, "%.*s/%s", (int)(slash - cfgpath), cfgpath, name);
}

/*
 * The value of the last "key = value" (or "key=value") line of path into
 * out.  Returns 1 found, 0 not found or no file, -1 unreadable.
 */
static int
read_key(const char *path, const char *key, char *out, size_t outsz)
{
	char line[2048];
	size_t klen = strlen(key);
	int found = 0;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fgets(line, sizeof line, f) != NULL) {
		char *p = line, *e;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, key, klen) != 0)
			continue;
		p += klen;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p++ != '=')
			continue;
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		snprintf(out, outsz, "%s", p);
		found = 1;
	}
	fclose(f);
	return found;
}

/* Write text to path atomically (tmp + rename) with the given mode and,
 * when uid is not -1, owner.  Returns 0 or -1 (reason on stderr). */
static int
write_file(const char *path, const char *text, mode_t mode, uid_t uid, gid_t gid)
{
	char tmp[CONFIG_STR + 16];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
		goto fail;
	if (write(fd, text, len) != (ssize_t)len || fchmod(fd, mode) != 0 ||
	    (uid != (uid_t)-1 && fchown(fd, uid, gid) != 0) || fsync(fd) != 0) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		goto fail;
	}
	return 0;
fail:
	refuse("%s: %s", path, strerror(errno));
	return -1;
}

/*
 * Set db_user and db_password in the config file, keeping every other line,
 * its owner and its mode.  Every earlier line of either key is replaced (the
 * last value of a key wins, so none may be left behind).
 */
static int
write_config(const char *path, const char *user, const char *password)
{
	char line[2048], *buf = NULL;
	size_t len = 0, cap = 0;
	int done_user = 0, done_pw = 0, rc;
	struct stat st;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL || fstat(fileno(f), &st) != 0) {
		if (f != NULL)
			fclose(f);
		return refuse("%s: %s", path, strerror(errno)), -1;
	}
	for (;;) {
		char out[2200];
		const char *p;
		int n;

		if (fgets(line, sizeof line, f) == NULL)
			break;
		p = line + strspn(line, " \t");
		if (strncmp(p, "db_user", 7) == 0 && strchr(" \t=", p[7]) != NULL)
			n = done_user++ ? 0 : snprintf(out, sizeof out, "db_user = %s\n", user);
		else if (strncmp(p, "db_password", 11) == 0 && strchr(" \t=", p[11]) != NULL)
			n = done_pw++ ? 0 : snprintf(out, sizeof out, "db_password = %s\n", password);
		else
			n = snprintf(out, sizeof out, "%s", line);
		if (len + (size_t)n + 128 > cap) {
			char *nb = realloc(buf, cap = (cap + (size_t)n + 128) * 2);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return refuse("out of memory"), -1;
			}
			buf = nb;
		}
		memcpy(buf + len, out, (size_t)n);
		len += (size_t)n;
	}
	fclose(f);
	if (buf == NULL && (buf = malloc(256)) == NULL)
		return refuse("out of memory"), -1;
	buf[len] = '\0';
	if (!done_user)
		len += (size_t)sprintf(buf + len, "db_user = %s\n", user);
	if (!done_pw)
		sprintf(buf + len, "db_password = %s\n", password);
	rc = write_file(path, buf, st.st_mode & 07777, st.st_uid, st.st_gid);
	sodium_memzero(buf, strlen(buf));
	free(buf);
	return rc;
}

int
setup_migrate_config(const struct config *cfg, struct config *out)
{
	char path[CONFIG_STR + 32], user[CONFIG_STR], pw[CONFIG_STR];
	int u, p;

	*out = *cfg;
	beside(cfg->path, "migrate.conf", path, sizeof path);
	if (access(path, F_OK) != 0)
		return 0;
	if ((u = read_key(path, "db_user", user, sizeof user)) < 0 ||
	    (p = read_key(path, "db_password", pw, sizeof pw)) < 0) {
		fprintf(stderr, "arps-admin: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (u != 1 || p != 1) {
		fprintf(stderr, "arps-admin: %s: needs db_user and db_password\n", path);
		return -1;
	}
	snprintf(out->db_user, sizeof out->db_user, "%s", user);
	snprintf(out->db_password, sizeof out->db_password, "%s", pw);
	return 1;
}

int
setup_db(const struct config *cfg, int rotate)
{
	static struct config mcfg;	/* db keeps a pointer to its config */
	char mpath[CONFIG_STR + 32], bpath[CONFIG_STR + 32], text[4096];
	const char *sock = cfg->db_socket[0] ? cfg->db_socket : DEFAULT_SOCKET;
	struct cred app = { SETUP_APP_USER, "", "kept" }, mig = { SETUP_MIGRATE_USER, "", "kept" },
	    bak = { SETUP_BACKUP_USER, "", "kept" };
	struct cred *all[3] = { &app, &mig, &bak };
	struct db_root *my = NULL;
	struct db *db = NULL;
	const char *hosts[1 + CONFIG_APP_HOSTS] = { "localhost" };
	size_t nhost = 1, h;
	int ntables = 0, rc = 1, i;

	if (!db_setup_ident_ok(cfg->db_name))
		return refuse("db_name must be letters, digits and _: %s", cfg->db_name);
	if (geteuid() != 0)
		return refuse("run as root (it connects as MariaDB's root over the unix socket "
		    "and writes root-only credential files)");
	beside(cfg->path, "migrate.conf", mpath, sizeof mpath);
	beside(cfg->path, "backup.cnf", bpath, sizeof bpath);
	/* arps_app and arps_migrate for localhost and every db_app_hosts
	 * pattern (the app hosts of a cluster, design.md §16); arps_backup
	 * for localhost only (mariadb-dump runs on a node). */
	for (h = 0; h < cfg->napp_host; h++)
		hosts[nhost++] = cfg->app_host[h];

	/* The passwords: those already written are kept unless rotating. */
	if (!rotate && strcmp(cfg->db_user, SETUP_APP_USER) == 0 && password_ok(cfg->db_password))
		snprintf(app.password, sizeof app.password, "%s", cfg->db_password);
	if (!rotate && read_key(mpath, "db_password", mig.password, sizeof mig.password) != 1)
		mig.password[0] = '\0';
	if (!rotate && read_key(bpath, "password", bak.password, sizeof bak.password) != 1)
		bak.password[0] = '\0';
	for (i = 0; i < 3; i++)
		if (!password_ok(all[i]->password)) {
			newpassword(all[i]->password);
			all[i]->state = rotate ? "rotated" : "new";
		}

	/* Files first: a run stopped between the two is repaired by the next. */
	if (app.state[0] != 'k' || strcmp(cfg->db_user, SETUP_APP_USER) != 0)
		if (write_config(cfg->path, SETUP_APP_USER, app.password) != 0)
			goto out;
	if (mig.state[0] != 'k') {
		snprintf(text, sizeof text, "# arps_migrate: DDL, used only by `arps-admin migrate`.\n"
		    "# Written by arps-admin setup-db; root only.\n"
		    "db_user = %s\ndb_password = %s\n", mig.user, mig.password);
		if (write_file(mpath, text, 0600, 0, 0) != 0)
			goto out;
	}
	if (bak.state[0] != 'k') {
		snprintf(text, sizeof text, "# arps_backup: read and lock, for mariadb-dump:\n"
		    "#   mariadb-dump --defaults-extra-file=%s --single-transaction "
		    "--triggers %s\n# Written by arps-admin setup-db; root only.\n"
		    "[client]\nuser=%s\npassword=%s\nsocket=%s\n", bpath, cfg->db_name,
		    bak.user, bak.password, sock);
		if (write_file(bpath, text, 0600, 0, 0) != 0)
			goto out;
	}

	if ((my = db_setup_root_open(sock)) == NULL || db_setup_database(my, cfg->db_name) != 0)
		goto out;
	for (i = 0; i < 3; i++)
		for (h = 0; h < (all[i] == &bak ? 1 : nhost); h++)
			if (db_setup_ensure_user(my, all[i]->user, hosts[h], all[i]->password,
			    all[i] == &app) != 0)
				goto out;
	for (h = 0; h < nhost; h++)
		if (db_setup_grant_migrate(my, cfg->db_name, hosts[h]) != 0)
			goto out;
	if (db_setup_grant_backup(my, cfg->db_name) != 0)
		goto out;
	for (i = 0; i < 3; i++)
		printf("user %s: %s\n", all[i]->user,
		    strcmp(all[i]->state, "kept") == 0 ? "password kept" :
		    strcmp(all[i]->state, "new") == 0 ? "created" : "password rotated");

	/* Migrate as arps_migrate, then grant arps_app on what exists now. */
	mcfg = *cfg;
	snprintf(mcfg.db_user, sizeof mcfg.db_user, "%s", mig.user);
	snprintf(mcfg.db_password, sizeof mcfg.db_password, "%s", mig.password);
	if (mcfg.db_socket[0] == '\0')
		snprintf(mcfg.db_socket, sizeof mcfg.db_socket, "%s", sock);
	if ((db = db_open(&mcfg)) == NULL || db_ensure(db) != DB_OK) {
		refuse("cannot connect as %s: %s", mig.user, db ? db_error(db) : "out of memory");
		goto out;
	}
	if (db_migrate(db, cfg->migrations_dir, 1) != DB_OK) {
		refuse("migrate failed: %s", db_error(db));
		goto out;
	}
	printf("schema up to date\n");
	for (h = 0; h < nhost; h++)
		if (db_setup_grant_app(my, cfg->db_name, hosts[h], &ntables) != 0)
			goto out;
	printf("grants: %s row access on %d tables (ledger tables append-only), "
	    "%s DDL, %s read and lock\n", app.user, ntables, mig.user, bak.user);
	for (h = 1; h < nhost; h++)
		printf("hosts: %s and %s also from '%s'\n", app.user, mig.user, hosts[h]);
	rc = 0;
out:
	for (i = 0; i < 3; i++)
		sodium_memzero(all[i]->password, sizeof all[i]->password);
	sodium_memzero(text, sizeof text);
	db_close(db);
	db_setup_root_close(my);
	return rc;
}
