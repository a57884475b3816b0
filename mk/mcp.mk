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
