# make bench (tools/bench.sh, tools/bench-sweep.sh): the fresh stack under
# var/bench runs with the production default of INSTALL.md, a worker recycled
# after 10,000 requests, not the dev stack's 1,000 (a recycle is a fork, a new
# MariaDB connection and re-prepared statements, which the dev value would
# charge to every benchmark row ten times as often).  Override from the
# environment: ARPS_MAX_REQUESTS=1000 make bench.
#
#   make bench         the full run (about 15-20 minutes: re-embedding 10,000
#                      texts, tools/bench-embed.sh, takes about 8 of them)
#   make bench-quick   a smoke run: 3 s rows, a 2,000-row sweep backlog,
#                      500 texts to re-embed

.PHONY: bench-quick

bench: export ARPS_MAX_REQUESTS ?= 10000
bench-quick: export ARPS_MAX_REQUESTS ?= 10000

bench-quick: $(B)/bench-ceiling $(B)/tests/arps-fixture
	@BENCH_SECONDS=$${BENCH_SECONDS:-3} BENCH_WARMUP=$${BENCH_WARMUP:-1} \
	    BENCH_SWEEP_N=$${BENCH_SWEEP_N:-2000} BENCH_SWEEP_STUDIES=$${BENCH_SWEEP_STUDIES:-2} \
	    BENCH_EMBED_N=$${BENCH_EMBED_N:-500} \
	    tools/dev.sh bench
