#!/usr/bin/env python3
"""The MCP tools' output schemas, from the OpenAPI document (make, mk/mcp.mk).

    tools/mcp-schemas.py build/openapi.json build/gen/mcp_schemas.c

For every operation of the document, the JSON Schema of what its tool
answers as structuredContent (design.md §11.3): any of the operation's
2xx JSON answers, or the error body `Error` (a refusal is a tool result
too, with isError, and carries the REST error body).  The root is
`type: object` as MCP asks; the components it uses are copied under
`$defs` with their references rewritten, so each schema stands alone.
The output is C: a table of (method, route pattern with "{}" for each
path parameter, schema text) that fcgi/mcp.c looks its tools' routes up
in.  Fails when an operation's answer is not an object schema.
"""
import json
import re
import sys

METHODS = ("get", "put", "post", "delete", "patch")
COMP = "#/components/schemas/"
# Left out of the copies: ErrorCode's description is the table of every
# code and what to do about it (3.5 KB, in the document and api.md §6),
# which would be repeated in each tool's schema.
TRIM = {"ErrorCode": ("description",)}


def deref(doc, obj):
    """A components/responses (or other) $ref, followed."""
    while isinstance(obj, dict) and "$ref" in obj:
        ref = obj["$ref"]
        if not ref.startswith("#/"):
            raise SystemExit("mcp-schemas: external $ref %s" % ref)
        node = doc
        for part in ref[2:].split("/"):
            node = node[part]
        obj = node
    return obj


def rewrite(node, used, doc):
    """A copy of node with #/components/schemas/X as #/$defs/X; used gains X."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                if not v.startswith(COMP):
                    raise SystemExit("mcp-schemas: $ref %s outside components/schemas" % v)
                name = v[len(COMP):]
                if name not in used:
                    used[name] = None
                    comp = dict(doc["components"]["schemas"][name])
                    for key in TRIM.get(name, ()):
                        comp.pop(key, None)
                    used[name] = rewrite(comp, used, doc)
                out[k] = "#/$defs/" + name
            else:
                out[k] = rewrite(v, used, doc)
        return out
    if isinstance(node, list):
        return [rewrite(v, used, doc) for v in node]
    return node


def is_object(schema, doc):
    """Whether every value schema admits is an object (type, or all branches)."""
    s = schema
    if "$ref" in s:
        s = deref(doc, s)
    if s.get("type") == "object":
        return True
    for k in ("oneOf", "anyOf"):
        if k in s:
            return all(is_object(b, doc) for b in s[k])
    if "allOf" in s:
        return any(is_object(b, doc) for b in s["allOf"])
    return False


def output_schema(doc, path, method, op):
    answers = []
    for code, resp in sorted(op.get("responses", {}).items()):
        if not re.fullmatch(r"2[0-9][0-9]", code):
            continue
        resp = deref(doc, resp)
        media = resp.get("content", {}).get("application/json")
        if media is None or "schema" not in media:
            continue
        if not is_object(media["schema"], doc):
            raise SystemExit("mcp-schemas: %s %s %s: the answer is not an object schema"
                             % (method.upper(), path, code))
        if media["schema"] not in answers:
            answers.append(media["schema"])
    if not answers:
        return None
    used = {}
    branches = [rewrite(a, used, doc) for a in answers]
    branches.append(rewrite({"$ref": COMP + "Error"}, used, doc))
    schema = {"type": "object", "anyOf": branches}
    schema["$defs"] = {k: used[k] for k in sorted(used)}
    return schema


def c_string(s):
    """s as C string literal lines of at most ~100 characters."""
    out, line = [], ""
    for ch in s:
        if ch in '"\\':
            e = "\\" + ch
        elif ord(ch) < 0x20:
            e = "\\%03o" % ord(ch)
        else:
            e = ch
        if len(line) + len(e) > 96:
            out.append('"%s"' % line)
            line = ""
        line += e
    out.append('"%s"' % line)
    return "\n\t    ".join(out)


def main(argv):
    if len(argv) != 3:
        raise SystemExit("usage: mcp-schemas.py build/openapi.json OUT.c")
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    base = doc["servers"][0]["url"].rstrip("/")
    rows = []
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            schema = output_schema(doc, path, method, item[method])
            if schema is None:
                continue
            pattern = base + re.sub(r"\{[^}/]+\}", "{}", path)
            text = json.dumps(schema, separators=(",", ":"), ensure_ascii=True)
            rows.append((method.upper(), pattern, text))
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("/* Generated by tools/mcp-schemas.py from docs/openapi.yaml: do not edit.\n"
                " * Each operation's output schema for its MCP tool (design.md §11.3). */\n"
                "#include <stddef.h>\n\n#include \"fcgi/mcp.h\"\n\n"
                "const struct mcp_schema mcp_schemas[] = {\n")
        for m, p, t in rows:
            f.write('\t{ "%s", "%s",\n\t    %s },\n' % (m, p, c_string(t)))
        f.write("};\nconst size_t nmcp_schemas = sizeof mcp_schemas / sizeof mcp_schemas[0];\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
