# The API contract (design.md §11): docs/openapi.yaml, served as
# GET /api/v1/openapi.json, and the agents' docs GET /skill.md, /llms.txt.
#
#   make openapi        build/openapi.json from docs/openapi.yaml (python3-yaml)
#   make openapi-deps   the validator (ajv, ajv-formats, the OpenAPI 3.1 schema)
#                       under build/openapi-js, pinned by tools/openapi-js/
#                       package-lock.json (npm ci)
#   make openapi-check  the check's self-test, then the document against
#                       OpenAPI 3.1, the route table (arps-fcgi --routes) and
#                       core/errors.h; with ARPS_RECORD_ANSWERS=FILE, every
#                       recorded answer too (tools/dev.sh runs both after the
#                       API suites)
#
# Like the model, these do not depend on compiler flags: fixed paths under
# build/ shared by every $(B).

OPENAPI_YAML  := docs/openapi.yaml
OPENAPI_JSON  := build/openapi.json
OPENAPI_JS    := build/openapi-js
OPENAPI_STAMP := $(OPENAPI_JS)/node_modules/.arps-openapi-deps
# where `make install` puts the files nginx serves (nginx/arps.conf)
ARPS_SHARE    ?= /usr/share/arps

.PHONY: openapi openapi-deps openapi-check install-agent-docs

all: $(OPENAPI_JSON)

openapi: $(OPENAPI_JSON)

$(OPENAPI_JSON): $(OPENAPI_YAML) tools/openapi-json.py
	@mkdir -p $(@D)
	python3 tools/openapi-json.py $(OPENAPI_YAML) $@

openapi-deps: $(OPENAPI_STAMP)

$(OPENAPI_STAMP): tools/openapi-js/package.json tools/openapi-js/package-lock.json
	@mkdir -p $(OPENAPI_JS)
	cp tools/openapi-js/package.json tools/openapi-js/package-lock.json $(OPENAPI_JS)/
	cd $(OPENAPI_JS) && npm ci --silent --no-audit --no-fund
	@touch $@

openapi-check: $(OPENAPI_JSON) $(OPENAPI_STAMP) $(B)/arps-fcgi
	@node tools/openapi-selftest.mjs --fcgi $(B)/arps-fcgi
	@node tools/openapi-check.mjs --fcgi $(B)/arps-fcgi \
	    $(if $(ARPS_RECORD_ANSWERS),--answers $(ARPS_RECORD_ANSWERS))

install: install-agent-docs

install-agent-docs: $(OPENAPI_JSON)
	install -d $(DESTDIR)$(ARPS_SHARE)
	install -m 0644 $(OPENAPI_JSON) $(DESTDIR)$(ARPS_SHARE)/openapi.json
	install -m 0644 docs/skill.md $(DESTDIR)$(ARPS_SHARE)/skill.md
	install -m 0644 docs/llms.txt $(DESTDIR)$(ARPS_SHARE)/llms.txt
