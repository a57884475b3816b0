#!/usr/bin/env python3
"""The credentials Schemathesis runs with (tools/schemathesis.sh), made on the
test stack through its own API and the test fixtures, printed as shell
assignments:

    ARPS_ST_TOKEN         a researcher's access token (a wallet topped up)
    ARPS_ST_AGENT_KEY     an agent's API key (bio set, reputation 100), claimed by a
                          third account that Schemathesis never acts as, so that
                          replacing an agent's key cannot revoke it
    ARPS_ST_AGENT_ID, ARPS_ST_ACCOUNT_ID
    ARPS_ST_LOGOUT_ACCOUNT  another account, whose tokens (arps-fixture
                          token-new) the logout operations spend
                          (tools/schemathesis-hooks.py)
    ARPS_ST_ROTATE_KEY    a second agent's key, for key rotation (which
                          replaces the key it is called with)

Needs ARPS_BASE_URL, ARPS_CONFIG and ARPS_VAR (tools/dev.sh test).
"""
import glob
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ["ARPS_BASE_URL"].rstrip("/") + "/api/v1"
CONFIG = os.environ["ARPS_CONFIG"]
VAR = os.environ["ARPS_VAR"]


def api(method, path, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise SystemExit("schemathesis-setup: %s %s: %d %s" % (method, path, e.code, e.read()[:300]))


def run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def login(tag):
    email = "%s-%s@example.org" % (tag, secrets.token_hex(4))
    api("POST", "/auth/email/send-code", {"email": email})
    code = None
    for _ in range(100):
        for f in glob.glob(os.path.join(VAR, "mail", "*.eml")):
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if re.search(r"^To: %s$" % re.escape(email), text, re.M):
                m = re.search(r"login code is ([0-9]{6})", text)
                code = m and m.group(1)
        if code:
            break
        time.sleep(0.1)
    if not code:
        raise SystemExit("schemathesis-setup: no login code mailed to " + email)
    r = api("POST", "/auth/login", {"provider": "email", "email": email, "code": code})
    return r["access_token"], r["account"]["id"]


def main():
    fixture = ["build/tests/arps-fixture", "--config", CONFIG]
    # the suites before have used the hour's login codes of 127.0.0.1
    run(*fixture, "rate-events-age", "7200")
    token, account = login("st-researcher")
    _, logout_account = login("st-logout")
    owner_token, _ = login("st-owner")
    run("build/arps-admin", "--config", CONFIG, "topup", account, "100000000")
    agent = api("POST", "/agents/register", {"name": "Schemathesis", "description": "the fuzzer's agent"})
    api("POST", "/auth/claim", {"claim_code": agent["claim_code"]},
        {"Authorization": "Bearer " + owner_token})
    api("POST", "/profile/bio", {"bio": "A retired nurse who likes surveys about health and gardens."},
        {"X-API-Key": agent["api_key"]})
    run(*fixture, "agent-reputation", agent["agent_id"], "100")
    rotating = api("POST", "/agents/register", {"name": "Schemathesis rotating",
                                                "description": "its key is rotated"})
    for k, v in (("ARPS_ST_TOKEN", token), ("ARPS_ST_AGENT_KEY", agent["api_key"]),
                 ("ARPS_ST_AGENT_ID", agent["agent_id"]), ("ARPS_ST_ACCOUNT_ID", account),
                 ("ARPS_ST_LOGOUT_ACCOUNT", logout_account),
                 ("ARPS_ST_ROTATE_KEY", rotating["api_key"])):
        print("%s=%s" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
