# arps: plain Makefile.  `make` builds every binary into build/.
# `make run` / `make test` are the dev-stack contract of design.md §8.

CC      ?= cc
B       := build
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wno-format-nonliteral
ifdef CI
WERROR  := -Werror
endif
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -fno-strict-aliasing $(WARN) $(WERROR) -I.
PKGS    := json-c libmariadb libsodium
PKGCFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKGLIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# One list a folder, in the dependency order of design.md §2.1 (each may use
# only the ones before it; tools/check-deps.sh holds it).
CORE_SRC    := $(sort $(wildcard core/*.c))
ENC_SRC     := $(sort $(wildcard encoder/*.c))
LIB_SRC     := $(sort $(wildcard lib/*.c))
DB_SRC      := $(sort $(wildcard db/*.c))
TXN_SRC     := $(sort $(wildcard txn/*.c))
MATCH_SRC   := $(sort $(wildcard match/*.c))
ADMIN_SRC   := $(sort $(wildcard admin/*.c))
FCGI_SRC    := $(sort $(wildcard fcgi/*.c))
# The transports and the delivery loops go into arps-deliver only: the
# workers carry no libcurl and no code that forks.
DELIVER_SRC := $(sort $(wildcard deliver/*.c))
CORE_OBJ    := $(CORE_SRC:%.c=$(B)/%.o)
ENC_OBJ     := $(ENC_SRC:%.c=$(B)/%.o)
LIB_OBJ     := $(LIB_SRC:%.c=$(B)/%.o)
DB_OBJ      := $(DB_SRC:%.c=$(B)/%.o)
TXN_OBJ     := $(TXN_SRC:%.c=$(B)/%.o)
MATCH_OBJ   := $(MATCH_SRC:%.c=$(B)/%.o)
ADMIN_OBJ   := $(ADMIN_SRC:%.c=$(B)/%.o)
# and the MCP tools' output schemas, generated from docs/openapi.yaml (mk/mcp.mk)
FCGI_OBJ    := $(FCGI_SRC:%.c=$(B)/%.o) $(B)/fcgi/mcp_schemas.o
DELIVER_OBJ := $(DELIVER_SRC:%.c=$(B)/%.o)
# Test fixtures: a test-only library, linked into build/tests/arps-fixture
# and never into a daemon (design.md §2.1).
TESTLIB_SRC := $(sort $(wildcard tests/lib/*.c))
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(B)/%.o)

BINS := $(B)/arps-fcgi $(B)/arps-sweep $(B)/arps-admin $(B)/arps-deliver $(B)/arps-embed

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
DBT_SRC  := $(sort $(wildcard tests/db/test_*.c))
API_SRC  := $(sort $(wildcard tests/api/test_*.c))
UNIT_BIN := $(UNIT_SRC:%.c=$(B)/%)
DBT_BIN  := $(DBT_SRC:%.c=$(B)/%)
API_BIN  := $(API_SRC:%.c=$(B)/%)
API_HELP := $(filter-out $(API_SRC),$(sort $(wildcard tests/api/*.c)))
DBT_HELP := $(filter-out $(DBT_SRC),$(sort $(wildcard tests/db/*.c)))
UNIT_HELP := $(filter-out $(UNIT_SRC),$(sort $(wildcard tests/unit/*.c)))

.PHONY: all deps run demo test test-unit test-db test-api test-cluster bench coverage asan test-asan \
        install clean tests stop check

all: $(BINS)

deps:
	@tools/dev.sh deps

# COVFLAGS (make coverage): core/ objects only are instrumented; every link
# of a program that takes them passes it too (--coverage brings libgcov).
$(B)/core/%.o: core/%.c $(wildcard core/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COVFLAGS) -c -o $@ $<

$(B)/%.o: %.c $(wildcard core/*.h encoder/*.h lib/*.h db/*.h txn/*.h match/*.h admin/*.h fcgi/*.h deliver/*.h tests/lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKGCFLAGS) -c -o $@ $<

$(B)/arps-fcgi: $(B)/cmd/arps-fcgi.o $(FCGI_OBJ) $(MATCH_OBJ) $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $^ -lfcgi $(PKGLIBS) -lcrypto -lm

$(B)/arps-sweep: $(B)/cmd/arps-sweep.o $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $^ $(PKGLIBS) -lcrypto -lm

$(B)/arps-deliver: $(B)/cmd/arps-deliver.o $(DELIVER_OBJ) $(DB_OBJ) $(LIB_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $^ $(shell pkg-config --libs libcurl) $(PKGLIBS) -lcrypto -lpthread -lm

$(B)/arps-admin: $(B)/cmd/arps-admin.o $(ADMIN_OBJ) $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $^ $(PKGLIBS) -lcrypto -lm

# The encoder runs here only (design.md §15): no FastCGI worker links it.
$(B)/arps-embed: $(B)/cmd/arps-embed.o $(MATCH_OBJ) $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(ENC_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $^ $(PKGLIBS) -lcrypto -lm

# The test fixtures as a command (tests/arps-fixture.c): test builds only.
$(B)/tests/arps-fixture: $(B)/tests/arps-fixture.o $(TESTLIB_OBJ) $(ADMIN_OBJ) $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(CORE_OBJ)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $^ $(PKGLIBS) -lcrypto -lm

# Unit tests: core and the encoder, no I/O.
$(B)/tests/unit/%: tests/unit/%.c $(UNIT_HELP) $(CORE_OBJ) $(ENC_OBJ) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $< $(UNIT_HELP) $(CORE_OBJ) $(ENC_OBJ) $(UNIT_EXTRA) $(shell pkg-config --cflags --libs cmocka) -lm

# test_jb: the hand-written JSON of fcgi/jb.c, which needs json-c only.
$(B)/tests/unit/test_jb: $(B)/fcgi/jb.o
$(B)/tests/unit/test_jb: UNIT_EXTRA = $(B)/fcgi/jb.o $(shell pkg-config --cflags --libs json-c)

# DB tests: core + lib + db against the dev MariaDB.
# (admin/: dbtest_migrate_config reads migrate.conf as arps-admin does.)
$(B)/tests/db/%: tests/db/%.c $(DBT_HELP) $(TESTLIB_OBJ) $(ADMIN_OBJ) $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(ENC_OBJ) $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COVFLAGS) $(PKGCFLAGS) -o $@ $< $(DBT_HELP) $(TESTLIB_OBJ) $(DBT_EXTRA) $(ADMIN_OBJ) $(TXN_OBJ) $(DB_OBJ) $(LIB_OBJ) $(ENC_OBJ) $(CORE_OBJ) \
	    $(shell pkg-config --cflags --libs cmocka) $(PKGLIBS) -lcrypto -lm

# test_match_engine: the matching engine (match/) against a database of its own.
$(B)/tests/db/test_match_engine: $(MATCH_OBJ)
$(B)/tests/db/test_match_engine: DBT_EXTRA = $(MATCH_OBJ)

# API tests: libcurl through nginx.
$(B)/tests/api/%: tests/api/%.c $(API_HELP) $(wildcard tests/api/*.h) $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COVFLAGS) $(PKGCFLAGS) -o $@ $< $(API_HELP) $(CORE_OBJ) \
	    $(shell pkg-config --cflags --libs cmocka libcurl) $(PKGLIBS) -lcrypto -lpthread -lm

tests: $(UNIT_BIN) $(DBT_BIN) $(API_BIN) $(B)/tests/arps-fixture

run:
	@tools/dev.sh run

# Demo data for the stack make run keeps going (tools/demo.mjs): a
# researcher, funded studies, claimed agents and their participations.
demo: all $(B)/tests/arps-fixture
	@tools/dev.sh demo

# Every suite, then core/'s line coverage (>= 95%, make coverage), then the
# API suites again against a sanitized pool, then the
# Debian package on a booted Debian 12 root (make test-production, mk/deb.mk;
# ARPS_SKIP_PRODUCTION=1 skips it outside CI, with a message).
test:
	@tools/dev.sh test all
	@$(MAKE) --no-print-directory coverage
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory fuzz-smoke
	@tools/dev.sh test-production

test-unit:
	@tools/dev.sh test unit

# Static checks (design.md §2.5), also run by `make test`.
check: all tests
	@tools/check-core-purity.sh
	@tools/check-deps.sh
	@tests/check/test_check_deps.sh
	@tests/check/test_check_sql_home.sh
	@tools/check-next-actions.sh
	@tools/check-db-columns.sh
	@tools/check-sql-home.sh
	@tools/check-citations.sh

test-db:
	@tools/dev.sh test db

test-api:
	@tools/dev.sh test api

# design.md §16: 3 Galera nodes, 2 app hosts, a balancer and careful clients
# in network namespaces, under faults (root, galera-4, nginx, rsync: about 3
# minutes; tests/cluster/cluster.sh).  Its own CI step (.ci/run).
test-cluster: all
	@tools/dev.sh deps cluster
	@tests/cluster/cluster.sh

# tools/bench-lib.sh's fixture() runs build/tests/arps-fixture (a test
# build, not part of `all`).
bench: $(B)/bench-ceiling $(B)/tests/arps-fixture
	@tools/dev.sh bench

# The trivial FastCGI responder of the bench's ceiling rows (tools/bench.sh).
$(B)/bench-ceiling: tools/bench-ceiling.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKGCFLAGS) -o $@ $< -lfcgi $(PKGLIBS)

stop:
	@tools/dev.sh stop

# Line coverage of core/ by the unit tests (gcov): fails under
# MIN_COVERAGE percent (default 95; tools/coverage.sh).  Run by `make test`.
# The unit tests link encoder/ objects too, built without instrumentation.
COV_BIN := $(patsubst $(B)/%,$(B)/cov/%,$(UNIT_BIN))
coverage: | deps
	@rm -rf $(B)/cov
	@$(MAKE) --no-print-directory -s model
	@$(MAKE) --no-print-directory -s -j$$(nproc) B=$(B)/cov COVFLAGS="--coverage -O0" $(COV_BIN)
	@set -e; for t in $(COV_BIN); do $$t >/dev/null; done
	@tools/coverage.sh $(B)/cov

# The sanitized build is also the test build: ARPS_TEST_HOOKS turns on the
# matching engine's self-check and its small caches (match/engine.c,
# match/cache.c), which the daemon's build never has.
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -DARPS_TEST_HOOKS
# LeakSanitizer (part of ASan on Linux) on, no suppressions but
# tests/asan.supp (each entry says why); UBSan stops at the first report.
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1 \
    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan.supp:print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

asan:
	$(MAKE) B=$(B)/asan CFLAGS="$(ASAN_CFLAGS)" all tests

# The unit and DB suites built with ASan + UBSan + LeakSanitizer (a leak,
# an out-of-bounds access or undefined behaviour fails the test binary),
# then the API suites against a pool built the same way: a sanitizer
# report in any worker fails the run (tools/dev.sh greps the pool's log).
# Workers are forked and recycled, so the pool runs without leak checks.
test-asan:
	@$(MAKE) --no-print-directory -s B=$(B)/asan CFLAGS="$(ASAN_CFLAGS)" \
	    $(B)/asan/arps-fcgi $(UNIT_BIN:$(B)/%=$(B)/asan/%) $(DBT_BIN:$(B)/%=$(B)/asan/%)
	@$(ASAN_ENV) ARPS_TEST_BIN_DIR=$(B)/asan tools/dev.sh test unit
	@$(ASAN_ENV) ARPS_TEST_BIN_DIR=$(B)/asan tools/dev.sh test db
	@ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ARPS_FCGI_BIN=$(B)/asan/arps-fcgi ARPS_TEST_HOOKS=1 tools/dev.sh test api

# Install the binaries, data, units, nginx site and man pages under PREFIX
# (default /usr/local); the Debian package runs it with PREFIX=/usr and
# DESTDIR (debian/rules).  Daemons go to sbin, the CLI to bin.
# build/arps-deliver and its unit are installed when that binary exists.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share/arps
MANDIR  ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
NGINXDIR ?= /etc/nginx

install: all | $(MODEL_BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(DATADIR)/migrations \
	    $(DESTDIR)$(DATADIR)/docs $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(NGINXDIR)/sites-available $(DESTDIR)$(NGINXDIR)/snippets
	install -m 0755 $(B)/arps-fcgi $(B)/arps-sweep $(B)/arps-embed $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(B)/arps-admin $(DESTDIR)$(BINDIR)/
	install -m 0644 db/migrations/*.sql $(DESTDIR)$(DATADIR)/migrations/
	install -m 0644 $(MODEL_BIN) $(DESTDIR)$(DATADIR)/model.bin
	install -d $(DESTDIR)$(DATADIR)/licences
	install -m 0644 docs/licences/bert-models.txt $(DESTDIR)$(DATADIR)/licences/bert-models.txt
	install -m 0644 docs/api.md $(DESTDIR)$(DATADIR)/docs/api.md
	install -m 0644 systemd/arps-sweep.cron $(DESTDIR)$(DATADIR)/arps-sweep.cron
	install -m 0644 systemd/arps-fcgi-remote-db.conf $(DESTDIR)$(DATADIR)/arps-fcgi-remote-db.conf
	install -m 0644 systemd/arps-fcgi.socket systemd/arps-fcgi.service systemd/arps-embed.service \
	    systemd/arps-sweep.service systemd/arps-sweep.timer $(DESTDIR)$(UNITDIR)/
	sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/bin/|$(BINDIR)/|g' -i \
	    $(DESTDIR)$(UNITDIR)/arps-fcgi.service $(DESTDIR)$(UNITDIR)/arps-sweep.service \
	    $(DESTDIR)$(UNITDIR)/arps-embed.service
	sed -e 's|@SOCKET@|/run/arps/arps.sock|' -e 's|@BURST@|60|' nginx/arps-api.inc \
	    > $(DESTDIR)$(NGINXDIR)/snippets/arps-api.inc
	sed -e 's|/usr/share/arps/|$(DATADIR)/|g' nginx/arps.conf > $(DESTDIR)$(NGINXDIR)/sites-available/arps
	install -m 0644 nginx/arps-http.conf $(DESTDIR)$(NGINXDIR)/sites-available/arps-http
	gzip -9n < docs/man/arps-admin.1 > $(DESTDIR)$(MANDIR)/man1/arps-admin.1.gz
	set -e; for m in arps-fcgi arps-sweep arps-embed; do \
	    gzip -9n < docs/man/$$m.8 > $(DESTDIR)$(MANDIR)/man8/$$m.8.gz; done
	if [ -x $(B)/arps-deliver ]; then \
	    install -m 0755 $(B)/arps-deliver $(DESTDIR)$(SBINDIR)/ && \
	    install -m 0644 systemd/arps-deliver.service $(DESTDIR)$(UNITDIR)/ && \
	    sed -i -e 's|/usr/sbin/|$(SBINDIR)/|g' $(DESTDIR)$(UNITDIR)/arps-deliver.service && \
	    gzip -9n < docs/man/arps-deliver.8 > $(DESTDIR)$(MANDIR)/man8/arps-deliver.8.gz; fi

clean:
	rm -rf $(B)

# Feature fragments (model build, matching evaluation, ...).  mk/model.mk
# first: others name its files in their prerequisites (mk/deb.mk's
# $(MODEL_BIN)), which make expands as it reads them.
include mk/model.mk
include $(filter-out mk/model.mk,$(sort $(wildcard mk/*.mk)))
