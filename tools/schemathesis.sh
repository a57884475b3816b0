#!/usr/bin/env bash
# Schemathesis in `make test` (design.md §11.1): requests generated from the
# OpenAPI document (examples, boundary values, negative data, and stateful
# sequences through its `links`: create a study -> read -> accept -> complete
# -> approve) against the test stack, every answer checked by all of
# Schemathesis's checks; zero failures passes.  Run by tools/dev.sh (test all,
# api or schemathesis) with ARPS_BASE_URL, ARPS_CONFIG and ARPS_VAR set.
# Config: tools/schemathesis.toml; checks the API cannot meet by design are
# turned off there by name, with the reason in docs/design.md §11.1.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ARPS_BASE_URL:?run through tools/dev.sh test}" "${ARPS_CONFIG:?}" "${ARPS_VAR:?}"

make -s schemathesis-deps openapi
PY=build/schemathesis/venv/bin/python
creds=$("$PY" tools/schemathesis-setup.py)
while IFS='=' read -r k v; do export "$k=$v"; done <<<"$creds"

out="$ARPS_VAR/log/schemathesis"
rm -rf "$out"
mkdir -p "$out"
export ARPS_ST_CALLS="$out/calls.jsonl"
set +e
build/schemathesis/venv/bin/schemathesis --config-file tools/schemathesis.toml run \
    --report junit,ndjson --report-dir "$out" \
    build/openapi.json 2>&1 | tee "$out/output.txt"
rc=${PIPESTATUS[0]}
set -e
# The figures Schemathesis's own summary leaves out, from its NDJSON report:
# operations, requests sent, checks run (and failed), per check; the
# stateful phase's chains (a study this run created, accepted, completed and
# approved: at least one, or the step fails); and from the hooks' log
# (tools/schemathesis-hooks.py) the requests per credential, where a 401 to
# one of the run's valid credentials fails the step too.
"$PY" - "$out"/ndjson-*.ndjson "$ARPS_ST_CALLS" <<'PYEOF' || rc=1
import base64, collections, json, re, sys
ops, requests, checks, failed = set(), 0, collections.Counter(), collections.Counter()
total_ops = 0
steps = collections.defaultdict(set)    # study id -> steps that succeeded in the stateful phase
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if "LoadingFinished" in e:
        total_ops = e["LoadingFinished"]["statistic"]["operations"]["selected"]
    f = e.get("ScenarioFinished")
    if not f or f.get("status") == "skip":
        continue
    rec = f["recorder"]
    for i in rec.get("interactions", {}).values():
        requests += 1
        method, uri = i["request"]["method"], i["request"]["uri"].split("?")[0]
        ops.add("%s %s" % (method, uri))
        res = i.get("response") or {}
        if f.get("phase") != "stateful" or res.get("status_code") not in (200, 201):
            continue
        if method == "POST" and uri.endswith("/studies") and res["status_code"] == 201:
            body = json.loads(base64.b64decode(res["content"]["$base64"]))
            steps[body["id"]].add("created")
        m = re.search(r"/studies/(std_[0-9A-Za-z]+)/(accept|complete|participants/[^/]+/approve)$", uri)
        if method == "POST" and m:
            steps[m.group(1)].add({"accept": "accepted", "complete": "completed"}.get(
                m.group(2), "approved"))
    for results in rec.get("checks", {}).values():
        for c in results:
            checks[c["name"]] += 1
            if c["status"] != "success":
                failed[c["name"]] += 1
print("schemathesis: %d operations, %d requests, %d checks (%d failed): %s" % (
    total_ops, requests, sum(checks.values()), sum(failed.values()),
    ", ".join("%s %d" % kv for kv in sorted(checks.items()))))
chain = ("created", "accepted", "completed", "approved")
count = {s: sum(1 for v in steps.values() if s in v) for s in chain}
chains = sum(1 for v in steps.values() if v.issuperset(chain))
print("schemathesis: stateful: studies %s; %d complete chains create -> accept -> complete -> approve" % (
    ", ".join("%s %d" % (s, count[s]) for s in chain), chains))

sent, unauthorized = collections.Counter(), collections.Counter()
for line in open(sys.argv[2], encoding="utf-8"):
    c = json.loads(line)
    sent[c["credential"]] += 1
    if c["status"] == 401:
        unauthorized[c["credential"]] += 1
valid = ("agent", "researcher", "rotation-agent", "logout-account")
bad = sum(unauthorized[k] for k in valid)
print("schemathesis: requests by credential (401s): %s; 401s to a valid credential: %d" % (
    ", ".join("%s %d (%d)" % (k, sent[k], unauthorized[k]) for k in (*valid, "none", "other")), bad))
if chains == 0:
    print("schemathesis: FAILED: no stateful chain reached approve", file=sys.stderr)
if bad:
    for line in open(sys.argv[2], encoding="utf-8"):
        c = json.loads(line)
        if c["status"] == 401 and c["credential"] in valid:
            print("schemathesis: 401 to a valid credential: %s" % line.strip(), file=sys.stderr)
sys.exit(1 if chains == 0 or bad else 0)
PYEOF
exit "$rc"
