# Schemathesis (design.md §11.1): requests generated from docs/openapi.yaml
# against the test stack, every answer checked (tools/schemathesis.sh; run by
# `tools/dev.sh test all|api|schemathesis`).  Installed into a venv of
# hash-pinned wheels (tools/schemathesis-requirements.txt, pip
# --require-hashes --no-deps: nothing unlisted), like the BERT tools.
#
#   make schemathesis-deps   the venv under build/schemathesis

ST_DIR     := build/schemathesis
ST_VENV    := $(ST_DIR)/venv
ST_VENV_OK := $(ST_VENV)/.arps-ok

.PHONY: schemathesis-deps

schemathesis-deps: $(ST_VENV_OK)

$(ST_VENV_OK): tools/schemathesis-requirements.txt
	@mkdir -p $(ST_DIR)
	rm -rf $(ST_VENV)
	python3.11 -m venv $(ST_VENV)
	$(ST_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes \
	    --no-deps -r tools/schemathesis-requirements.txt
	@touch $@
