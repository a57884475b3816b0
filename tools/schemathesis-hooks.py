"""Schemathesis hooks of `make test`'s run (tools/schemathesis.sh,
design.md §11.1), loaded through `hooks` in tools/schemathesis.toml.

Credentials that outlive the run.  The operations that revoke the credential
they are called with get one of their own each time the run's would be sent:
the logout operations a new token of an account the run never acts as
(`arps-fixture token-new`), key rotation the current key of an agent of its
own (the one its last 200 answered, a replay aside).  Every request is logged with the kind
of credential it carried ($ARPS_ST_CALLS, JSON lines), so the script can
count the 401s a valid credential got.

The stateful chain (create a study -> accept -> complete -> approve) can run
to its end.  In the stateful phase a positive study body gets what no schema
can say (a deadline in the future, a public study URL, a budget the wallet
covers, integers as integers), every Idempotency-Key is new (a key sent
again replays or conflicts, which the other phases test), and no list is
asked for a cursor no page gave (422).  Completing a
study this run created sends the completion code its creation answered.
At its first accept in a stateful scenario the run's agent leaves the
participation an earlier scenario left it (one at a time, api.md §7.5) and, if
rejections brought its reputation under 60, gets 100 back (test fixture):
one scenario that stopped halfway does not close the chain for the rest.
"""
import datetime
import itertools
import json
import os
import subprocess
import threading
import urllib.error
import urllib.request

import schemathesis
from schemathesis.generation.meta import TestPhase
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.stateful import OpenAPIStateMachine

ENV = os.environ
BASE = ENV["ARPS_BASE_URL"].rstrip("/") + "/api/v1"
MAIN_KEY = ENV["ARPS_ST_AGENT_KEY"]
MAIN_TOKEN = ENV["ARPS_ST_TOKEN"]
AGENT_ID = ENV["ARPS_ST_AGENT_ID"]
LOGOUT_ACCOUNT = ENV["ARPS_ST_LOGOUT_ACCOUNT"]
FIXTURE = ["build/tests/arps-fixture", "--config", ENV["ARPS_CONFIG"]]

REVOKES_TOKEN = {"POST /auth/logout", "POST /auth/logout-all"}
ROTATE = "POST /agents/me/api-key"

lock = threading.Lock()
calls = open(ENV["ARPS_ST_CALLS"], "a", encoding="utf-8")
serial = itertools.count(1)
rotate_key = ENV["ARPS_ST_ROTATE_KEY"]   # valid now
rotate_spent = set()                      # keys a rotation replaced
logout_live = set()                       # tokens given out, not yet spent
codes = {}                                # study created by this run -> its completion code
scenario = 0                              # stateful scenarios begun
freed = 0                                 # the last one whose agent was freed

# Hypothesis builds a state machine per scenario; counting them tells a
# participation of this scenario from one an earlier scenario left.
_machine_init = OpenAPIStateMachine.__init__


def _counting_init(self, *args, **kwargs):
    global scenario
    with lock:
        scenario += 1
    _machine_init(self, *args, **kwargs)


OpenAPIStateMachine.__init__ = _counting_init


def header(headers, name):
    for k, v in (headers or {}).items():
        if k.lower() == name.lower():
            return k, v
    return None, None


def api(method, path, key):
    req = urllib.request.Request(BASE + path, method=method, headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, None


def study_of(case):
    return (case.path_parameters or {}).get("id")


def positive_stateful(case):
    meta = case.meta
    return (meta is not None and meta.phase.name == TestPhase.STATEFUL
            and meta.generation.mode == GenerationMode.POSITIVE)


@schemathesis.hook
def map_case(ctx, case):
    if not positive_stateful(case):
        return case
    k, _ = header(case.headers, "Idempotency-Key")
    if k is not None:
        case.headers[k] = "st-%d" % next(serial)
    if case.query:
        case.query.pop("cursor", None)
    label = case.operation.label
    body = case.body
    if label == "POST /studies" and isinstance(body, dict):
        if body.get("deadline") is not None:
            later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=30)
            body["deadline"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
        body["study_url"] = "https://example.org/study"
        body["reward_per_participant"] = 1 + int(body.get("reward_per_participant", 0)) % 1000
        body["max_participants"] = 1 + int(body.get("max_participants", 0)) % 20
        body["estimated_duration_minutes"] = 1 + int(body.get("estimated_duration_minutes", 0)) % 1440
    elif label == "POST /studies/{id}/complete":
        with lock:
            code = codes.get(study_of(case))
        if code is not None and isinstance(body, dict):
            body["completion_code"] = code
        elif code is not None:
            case.body = {"completion_code": code}
            case.media_type = "application/json"
    return case


def free_agent():
    """The run's agent without a participation (an earlier scenario's) and
    not suspended."""
    status, me = api("GET", "/agents/me", MAIN_KEY)
    if status != 200:
        return
    cur = me.get("current_study")
    if cur:
        api("POST", "/studies/%s/withdraw" % cur["study_id"], MAIN_KEY)
    if me.get("reputation", 100) < 60:
        subprocess.run(FIXTURE + ["agent-reputation", AGENT_ID, "100"], check=True,
                       stdout=subprocess.DEVNULL)


@schemathesis.hook
def before_call(ctx, case, kwargs):
    global freed
    label = case.operation.label
    hk, key = header(case.headers, "X-API-Key")
    ha, auth = header(case.headers, "Authorization")
    with lock:
        if label in REVOKES_TOKEN and auth == "Bearer " + MAIN_TOKEN:
            tok = subprocess.run(FIXTURE + ["token-new", LOGOUT_ACCOUNT], check=True,
                                 capture_output=True, text=True).stdout.strip()
            logout_live.add(tok)
            case.headers[ha] = "Bearer " + tok
        if label == ROTATE and (key == MAIN_KEY or key in rotate_spent):
            case.headers[hk] = rotate_key
        if (label == "POST /studies/{id}/accept" and key == MAIN_KEY and freed != scenario
                and case.meta is not None and case.meta.phase.name == TestPhase.STATEFUL):
            freed = scenario
            free_agent()


def credential(req):
    key = req.headers.get("X-API-Key")
    auth = req.headers.get("Authorization") or ""
    tok = auth[7:] if auth.startswith("Bearer ") else None
    if key is None and tok is None:
        return "none"
    for value in (key, tok):
        if value == MAIN_KEY:
            return "agent"
        if value == MAIN_TOKEN:
            return "researcher"
        if value is not None and value == rotate_key:
            return "rotation-agent"
        if value in logout_live:
            return "logout-account"
    return "other"


@schemathesis.hook
def after_call(ctx, case, response):
    global rotate_key
    label = case.operation.label
    req = response.request
    with lock:
        kind = credential(req)
        status = response.status_code
        body = None
        if status in (200, 201):
            try:
                body = json.loads(response.content or b"null")
            except ValueError:
                pass
        if label == "POST /studies" and status == 201 and isinstance(body, dict):
            codes[body.get("id")] = body.get("completion_code")
        # a replay (same Idempotency-Key) shows a key an earlier rotation made
        replayed = response.headers.get("idempotent-replayed", ["false"])[0] == "true"
        if (label == ROTATE and status == 200 and kind == "rotation-agent" and not replayed
                and isinstance(body, dict)):
            rotate_spent.add(rotate_key)
            rotate_key = body.get("api_key", rotate_key)
        auth = req.headers.get("Authorization") or ""
        if label == "POST /auth/logout" and status == 200:
            logout_live.discard(auth[7:])
        if label == "POST /auth/logout-all" and status == 200 and kind == "logout-account":
            logout_live.clear()
        phase = case.meta.phase.name.value if case.meta is not None else None
        line = {"op": label, "status": status, "credential": kind, "phase": phase,
                "path": req.path_url.split("?")[0]}
        if status == 401 and kind not in ("none", "other"):
            line["answer"] = response.content[:200].decode("utf-8", "replace")
            line["headers"] = sorted(req.headers)
        calls.write(json.dumps(line) + "\n")
        calls.flush()
