#!/usr/bin/env python3
"""Convert docs/openapi.yaml to the JSON that nginx serves (make openapi).

    tools/openapi-json.py docs/openapi.yaml build/openapi.json

Uses Debian's python3-yaml.  Strict where YAML is looser than JSON: a key
repeated in one mapping, a non-string key, or a value JSON has no type for
(a date, a timestamp, a set) fails the build instead of being converted
silently, so the served document is exactly the one written.
"""
import json
import os
import sys

import yaml


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and keeps only JSON types."""


def _mapping(loader, node):
    loader.flatten_mapping(node)
    out = {}
    for knode, vnode in node.value:
        key = loader.construct_object(knode, deep=True)
        if not isinstance(key, str):
            # response codes must be quoted: '200', not 200
            raise yaml.constructor.ConstructorError(
                None, None, "key %r is not a string" % (key,), knode.start_mark)
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, "duplicate key %r" % key, knode.start_mark)
        out[key] = loader.construct_object(vnode, deep=True)
    return out


def _refuse(loader, node):
    raise yaml.constructor.ConstructorError(
        None, None, "%s is not a JSON value (quote it)" % node.tag, node.start_mark)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
for tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary",
            "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap",
            "tag:yaml.org,2002:pairs"):
    StrictLoader.add_constructor(tag, _refuse)


def main(argv):
    if len(argv) != 3:
        print("usage: openapi-json.py IN.yaml OUT.json", file=sys.stderr)
        return 2
    src, dst = argv[1], argv[2]
    try:
        with open(src, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=StrictLoader)
    except (OSError, yaml.YAMLError) as e:
        print("openapi-json: %s: %s" % (src, e), file=sys.stderr)
        return 1
    if not isinstance(doc, dict) or not str(doc.get("openapi", "")).startswith("3.1."):
        print("openapi-json: %s: not an OpenAPI 3.1 document" % src, file=sys.stderr)
        return 1
    text = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    tmp = dst + ".tmp"
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(tmp, dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
