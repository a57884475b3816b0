# Fuzzing (libFuzzer + ASan + UBSan, clang): `make fuzz` builds each harness
# of tests/fuzz and runs it for FUZZ_SECONDS (default 30) on a fresh corpus.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -std=c11 -D_GNU_SOURCE -I.
FUZZ_DIR     := $(B)/fuzz

$(FUZZ_DIR)/fuzz_core: tests/fuzz/fuzz_core.c $(CORE_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ -lm

# The real fcgi/ edge but the FastCGI pool: routes, auth, handlers, answers.
$(FUZZ_DIR)/fuzz_body: tests/fuzz/fuzz_body.c $(filter-out fcgi/pool.c,$(FCGI_SRC)) $(CORE_SRC) \
    $(DB_SRC) $(LIB_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(PKGCFLAGS) -o $@ $^ $(PKGLIBS) -lcrypto -lm

$(FUZZ_DIR)/fuzz_embed: tests/fuzz/fuzz_embed.c lib/model.c $(CORE_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ -lm

fuzz: $(FUZZ_DIR)/fuzz_core $(FUZZ_DIR)/fuzz_body $(FUZZ_DIR)/fuzz_embed | $(MODEL_BIN)
	@set -e; for f in $^; do \
	    mkdir -p $(FUZZ_DIR)/corpus-$$(basename $$f); \
	    echo "fuzzing $$f for $(FUZZ_SECONDS)s"; \
	    seeds=tests/fuzz/seeds/$$(basename $$f); [ -d $$seeds ] || seeds=; \
	    $$f -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	        $(FUZZ_DIR)/corpus-$$(basename $$f) $$seeds 2>&1 | tail -4; \
	done
