# The MCP tools' output schemas (design.md §11.3): each operation's answer
# schema in build/openapi.json as a C table (tools/mcp-schemas.py), compiled
# into arps-fcgi as $(B)/fcgi/mcp_schemas.o, so the schemas are written
# once, in docs/openapi.yaml.  Like build/openapi.json, the generated
# source does not depend on compiler flags: one file for every $(B).

MCP_SCHEMAS_C := build/gen/mcp_schemas.c

$(MCP_SCHEMAS_C): build/openapi.json tools/mcp-schemas.py
	@mkdir -p $(@D)
	python3 tools/mcp-schemas.py build/openapi.json $@

$(B)/fcgi/mcp_schemas.o: $(MCP_SCHEMAS_C) fcgi/mcp.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The MCP endpoint's SDK test (design.md §11): the official TypeScript SDK
# client, pinned by tests/mcp/package-lock.json, installed under build/mcp
# with the test script beside it (node resolves packages from the script's
# directory).  tests/api/test_mcp runs `node build/mcp/participation.mjs`.
#
#   make mcp-deps     npm ci into build/mcp (part of `make tests`)

MCP_DIR  := build/mcp
MCP_DEPS := $(MCP_DIR)/node_modules/.arps-mcp-deps
MCP_JS   := $(patsubst tests/mcp/%,$(MCP_DIR)/%,$(wildcard tests/mcp/*.mjs))

.PHONY: mcp-deps

mcp-deps: $(MCP_DEPS) $(MCP_JS)

$(MCP_DEPS): tests/mcp/package.json tests/mcp/package-lock.json
	@mkdir -p $(MCP_DIR)
	cp tests/mcp/package.json tests/mcp/package-lock.json $(MCP_DIR)/
	cd $(MCP_DIR) && npm ci --silent --no-audit --no-fund
	@touch $@

$(MCP_DIR)/%.mjs: tests/mcp/%.mjs $(MCP_DEPS)
	cp $< $@

tests: mcp-deps
