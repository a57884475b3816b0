# Fuzzing (libFuzzer + ASan + UBSan, clang; tests/fuzz/README.md).
#   make fuzz        builds every harness and runs each for FUZZ_SECONDS
#                    (default 30) from a fresh copy of its seeds;
#   make fuzz-smoke  every seed once, then FUZZ_SMOKE_SECONDS (default 4)
#                    of fuzzing each: run by `make test`.
# A crash, leak or broken invariant fails the target; the input is saved as
# build/fuzz/crash-<harness>-* (libFuzzer's artifact) for replay:
#   build/fuzz/<harness> build/fuzz/crash-<harness>-...
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_SMOKE_SECONDS ?= 4
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -std=c11 -D_GNU_SOURCE -I.
# coverage left out of the encoder's dense kernels (the file says why)
FUZZ_COV     := -fsanitize=fuzzer-no-link \
                -fsanitize-coverage-ignorelist=tests/fuzz/coverage-ignore.txt
FUZZ_DIR     := $(B)/fuzz
FUZZ_NAMES   := fuzz_core fuzz_route fuzz_body fuzz_mcp fuzz_oidc fuzz_config fuzz_tokenize \
                fuzz_embed fuzz_embed_full
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)
# Longest input per harness: a token up to past its 8 KiB limit; the
# whole encoder takes milliseconds a text, so its inputs stay short; its
# input side takes ids of 2 bytes up to past EMBED_MAX_TOKENS (4096); the
# tokenizer has no length-dependent branch past 2048 bytes (a word is split
# at 1024 code points, a run of decomposed code points at 256, the
# harness's id buffer holds 512: all reached under 2048 bytes).
FUZZ_MAXLEN_fuzz_oidc  := 12000
FUZZ_MAXLEN_fuzz_body  := 8192
FUZZ_MAXLEN_fuzz_mcp   := 8192
FUZZ_MAXLEN_fuzz_tokenize := 2048
FUZZ_MAXLEN_fuzz_embed := 8448
FUZZ_MAXLEN_fuzz_embed_full := 512
# the BERT tokenizer stops at 512 ids, reached well under 4096 bytes; the
# whole encoder, as fuzz_embed_full, on short texts
FUZZ_MAXLEN_fuzz_wordpiece := 4096
FUZZ_MAXLEN_fuzz_bert_full := 512
fuzz_maxlen = $(or $(FUZZ_MAXLEN_$(1)),4096)

# Objects once, with coverage for libFuzzer (no main), shared by harnesses;
# clang and its libFuzzer runtime (libclang-rt-dev) come with make deps.
FUZZ_OBJ = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(1))
$(FUZZ_DIR)/obj/%.o: %.c $(wildcard core/*.h encoder/*.h lib/*.h db/*.h txn/*.h match/*.h \
    fcgi/*.h tests/fuzz/*.h) tests/fuzz/coverage-ignore.txt | deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_OPT_$(subst /,_,$*)) $(FUZZ_COV) $(PKGCFLAGS) -c -o $@ $<
# The dense kernels (no coverage, see coverage-ignore.txt) at -O2: at -O1
# they took two thirds of fuzz_bert_full's time, which a million inputs
# could not afford; sanitized as every object is.
FUZZ_OPT_encoder_kernels := -O2

FUZZ_LINK = $(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^
# The HTTP edge minus the pool, with the harnesses' authentication
# (tests/fuzz/fuzz_auth.c) instead of fcgi/auth.c.
FUZZ_EDGE := $(call FUZZ_OBJ,$(filter-out fcgi/pool.c fcgi/auth.c,$(FCGI_SRC)) \
    tests/fuzz/fuzz_auth.c $(MATCH_SRC) $(TXN_SRC) $(DB_SRC) $(LIB_SRC) $(ENC_SRC) $(CORE_SRC) \
    build/gen/mcp_schemas.c)

$(FUZZ_DIR)/fuzz_core: $(call FUZZ_OBJ,tests/fuzz/fuzz_core.c $(CORE_SRC))
	$(FUZZ_LINK) -lm
$(FUZZ_DIR)/fuzz_route: $(call FUZZ_OBJ,tests/fuzz/fuzz_route.c) $(FUZZ_EDGE)
	$(FUZZ_LINK) $(PKGLIBS) -lcrypto -lm
$(FUZZ_DIR)/fuzz_body: $(call FUZZ_OBJ,tests/fuzz/fuzz_body.c) $(FUZZ_EDGE)
	$(FUZZ_LINK) $(PKGLIBS) -lcrypto -lm
$(FUZZ_DIR)/fuzz_mcp: $(call FUZZ_OBJ,tests/fuzz/fuzz_mcp.c) $(FUZZ_EDGE)
	$(FUZZ_LINK) $(PKGLIBS) -lcrypto -lm
# lib/oidc.c is included by the harness (its static parsers).
$(FUZZ_DIR)/fuzz_oidc: $(call FUZZ_OBJ,tests/fuzz/fuzz_oidc.c lib/jwks.c $(CORE_SRC))
	$(FUZZ_LINK) $(PKGLIBS) -lcrypto -lm
$(FUZZ_DIR)/fuzz_config: $(call FUZZ_OBJ,tests/fuzz/fuzz_config.c lib/config.c lib/mail.c \
    $(CORE_SRC))
	$(FUZZ_LINK) $(PKGLIBS) -lm
$(FUZZ_DIR)/fuzz_tokenize: $(call FUZZ_OBJ,tests/fuzz/fuzz_tokenize.c $(ENC_SRC) $(CORE_SRC))
	$(FUZZ_LINK) -lm
$(FUZZ_DIR)/fuzz_embed: $(call FUZZ_OBJ,tests/fuzz/fuzz_embed.c $(ENC_SRC) $(CORE_SRC))
	$(FUZZ_LINK) -lm
$(FUZZ_DIR)/fuzz_embed_full: $(call FUZZ_OBJ,tests/fuzz/fuzz_embed_full.c $(ENC_SRC) $(CORE_SRC))
	$(FUZZ_LINK) -lm
# The BERT encoder (issue 34): its own target until it is the service's
# encoder, since its model files come from make bert-models (mk/bert.mk).
$(FUZZ_DIR)/fuzz_wordpiece: $(call FUZZ_OBJ,tests/fuzz/fuzz_wordpiece.c $(ENC_SRC) $(CORE_SRC))
	$(FUZZ_LINK) -lm
$(FUZZ_DIR)/fuzz_bert_full: $(call FUZZ_OBJ,tests/fuzz/fuzz_bert_full.c $(ENC_SRC) $(CORE_SRC))
	$(FUZZ_LINK) -lm

# $(call fuzz_run,NAME,SECONDS): fuzz from a fresh copy of the seeds (the
# seeds are never written), with the dictionary when there is one.
fuzz_run = rm -rf $(FUZZ_DIR)/corpus-$(1) && mkdir -p $(FUZZ_DIR)/corpus-$(1) && \
    { ! [ -d tests/fuzz/seeds/$(1) ] || cp tests/fuzz/seeds/$(1)/* $(FUZZ_DIR)/corpus-$(1)/; } && \
    $(FUZZ_DIR)/$(1) -max_total_time=$(2) -max_len=$(call fuzz_maxlen,$(1)) \
        -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-$(1)- \
        $(if $(wildcard tests/fuzz/$(1).dict),-dict=tests/fuzz/$(1).dict) \
        $(FUZZ_DIR)/corpus-$(1) > $(FUZZ_DIR)/$(1).log 2>&1 || \
    { tail -40 $(FUZZ_DIR)/$(1).log; echo "fuzz: $(1) FAILED (input saved: $(FUZZ_DIR)/crash-$(1)-*)"; exit 1; }

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-bert
FUZZ_BERT_NAMES := fuzz_wordpiece fuzz_bert_full

# The BERT harnesses for FUZZ_SECONDS each (not yet in fuzz-smoke: they
# need make bert-models).
fuzz-bert: $(FUZZ_BERT_NAMES:%=$(FUZZ_DIR)/%) | bert-models
	@set -e; $(foreach f,$(FUZZ_BERT_NAMES),echo "fuzz: $(f) for $(FUZZ_SECONDS)s"; \
	    $(call fuzz_run,$(f),$(FUZZ_SECONDS)); \
	    grep -E '^stat::number_of_executed_units|^Done' $(FUZZ_DIR)/$(f).log | tail -1;)
fuzz-build: $(FUZZ_BINS) | model

fuzz: fuzz-build
	@set -e; $(foreach f,$(FUZZ_NAMES),echo "fuzz: $(f) for $(FUZZ_SECONDS)s"; \
	    $(call fuzz_run,$(f),$(FUZZ_SECONDS)); \
	    grep -E '^stat::number_of_executed_units|^Done' $(FUZZ_DIR)/$(f).log | tail -1;)

# CI: every committed seed once (a regression input must stay fixed), then
# a few seconds of fuzzing each.
fuzz-smoke:
	@$(MAKE) --no-print-directory -s -j$$(nproc) fuzz-build
	@set -e; $(foreach f,$(FUZZ_NAMES),\
	    if [ -d tests/fuzz/seeds/$(f) ]; then $(FUZZ_DIR)/$(f) -runs=0 tests/fuzz/seeds/$(f) \
	        > $(FUZZ_DIR)/$(f).seeds.log 2>&1 || { tail -40 $(FUZZ_DIR)/$(f).seeds.log; \
	        echo "fuzz-smoke: $(f) fails on a committed seed"; exit 1; }; fi; \
	    $(call fuzz_run,$(f),$(FUZZ_SMOKE_SECONDS));) \
	echo "fuzz-smoke: $(words $(FUZZ_NAMES)) harnesses, every seed and $(FUZZ_SMOKE_SECONDS)s each: no crash"
