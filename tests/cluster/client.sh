#!/bin/bash
# A careful client of tests/cluster/cluster.sh, moving money through the
# balancer: it logs an agents' owner and its researcher in (the e-mail code from an app host's
# mail sink), has the account topped up (arps-admin against a node) and
# registers a webhook for it; then, round after round, creates a study,
# registers two agents, claims them, registers a webhook for each (to
# 127.0.0.1:9099, the receiver on whichever app host delivers), has them
# accept and complete, and approves one and rejects the other.  Every third
# round's study is left to the sweep instead: one agent completes, the other
# does not, and the study's participations are backdated 50 h
# (arps-fixture participations-backdate), so the sweep auto-approves the
# one and times out the other during the run.
# Every mutation carries an Idempotency-Key and is retried with it on a
# transport error or 502/503/504 (up to 60 tries, 0.25 s apart).  One line
# an outcome in LOG:
#   ok KIND KEY ID MS   an acknowledged write (MS: that try's time); KIND is
#                       login, topup, webhook, study, agent, claim, accept,
#                       complete, approve or reject; ID the id it made or
#                       moved (the participation for the last four)
#   due KIND PRT        a participation backdated for the sweep (timeout, auto)
#   retry KIND KEY STATUS (000: a transport error)
#   gaveup KIND KEY STATUS, refused KIND KEY STATUS
# Usage: client.sh BASE_URL LOG TAG DIR (DIR: the run's files: app*/mail,
# fixture.conf); runs until SIGTERM.
set -u
base=$1 log=$2 tag=$3 dir=$4
hook=http://127.0.0.1:9099
root=$(cd "$(dirname "$0")/../.." && pwd)
stop=0
trap 'stop=1' TERM INT

req() {	# req METHOD PATH BODY KEY AUTH_HEADER: sets st, ms, body
	local out
	out=$(curl -s -m 45 -o - -w '\n%{http_code} %{time_total}' -X "$1" "$base/api/v1$2" \
		-H 'Content-Type: application/json' -H "Idempotency-Key: $4" \
		${5:+-H "$5"} ${3:+--data "$3"} 2>/dev/null)
	body=${out%$'\n'*}
	set -- ${out##*$'\n'}
	st=${1:-000}
	ms=$(awk -v t="${2:-0}" 'BEGIN { printf "%d", t * 1000 }')
}
# careful KIND WANT METHOD PATH BODY [AUTH_HEADER]: a new key, retried;
# 0 when the answer is WANT (then the caller logs it), else 1 (logged here)
careful() {
	local kind=$1 want=$2 try
	shift 2
	key=$(cat /proc/sys/kernel/random/uuid)
	for try in $(seq 1 60); do
		req "$1" "$2" "$3" "$key" "${4:-}"
		case $st in
		000|502|503|504) echo "retry $kind $key $st" >>"$log"; sleep 0.25;;
		"$want") return 0;;
		*) echo "refused $kind $key $st $(printf '%s' "$body" | head -c 300)" >>"$log"; return 1;;
		esac
	done
	echo "gaveup $kind $key $st" >>"$log"
	return 1
}
ok() { echo "ok $1 $key $2 $ms" >>"$log"; }
j() { printf '%s' "$body" | jq -r "$1"; }
fixture() {	# a fixture verb against a node, retried while the cluster fails over
	local try
	for try in $(seq 1 40); do
		"$root/build/tests/arps-fixture" --config "$dir/fixture.conf" "$@" >/dev/null 2>>"$log.err" &&
			return 0
		sleep 0.5
	done
	echo "gaveup fixture $* " >>"$log"
	return 1
}

# login EMAIL: logs an account in by its e-mail code; sets token, acc
login() {
	local email=$1 code= f i
	careful sendcode 202 POST /auth/email/send-code "{\"email\":\"$email\"}" || return 1
	for i in $(seq 1 100); do
		f=$(grep -lx "To: $email" "$dir"/app*/mail/*.eml 2>/dev/null | head -1)
		[ -n "$f" ] && code=$(sed -n 's/.*login code is \([0-9]\{6\}\).*/\1/p' "$f" | head -1)
		[ -n "$code" ] && break
		sleep 0.2
	done
	[ -n "$code" ] || { echo "gaveup mail $email 000" >>"$log"; return 1; }
	careful login 200 POST /auth/login \
		"{\"provider\":\"email\",\"email\":\"$email\",\"code\":\"$code\"}" || return 1
	token=$(j .access_token) acc=$(j .account.id)
	ok login "$acc"
}

# --- the agents' owner: another account (an owner's agent cannot take part
# in its owner's own study: OWN_STUDY) ---
login "o-$tag@example.org" || exit 1
oauth="Authorization: Bearer $token"
# --- the researcher: log in by e-mail code, top up, a webhook ---
login "r-$tag@example.org" || exit 1
auth="Authorization: Bearer $token"
key=topup-$tag
"$root/build/arps-admin" --config "$dir/fixture.conf" topup "$acc" 100000000 >/dev/null 2>>"$log.err" ||
	{ echo "gaveup topup $key 000" >>"$log"; exit 1; }
ms=0; ok topup "$acc"
careful webhook 201 POST /webhooks "{\"url\":\"$hook/r/$acc\",\"events\":[\"submission.created\",\
\"study.status_changed\",\"study.full\",\"study.completed\",\"wallet.credited\"]}" "$auth" || exit 1
ok webhook "$(j .id)"

agent_events='["participation.accepted","participation.submitted","participation.approved",
"participation.rejected","participation.timed_out","reputation.changed","wallet.credited"]'
i=0
while [ $stop = 0 ]; do
	i=$((i + 1))
	swept=$(( i % 3 == 0 ))
	careful study 201 POST /studies "{\"title\":\"cl-$tag-$i\",\"description\":\"Round $i of $tag.\",\
\"study_url\":\"https://survey.example.org/s/$tag-$i\",\"reward_per_participant\":$((100 + i)),\
\"max_participants\":2,\"screening_criteria\":\"Anyone.\",\"estimated_duration_minutes\":5,\
\"completion_code\":\"done-$i\"}" "$auth" || continue
	sid=$(j .id)
	ok study "$sid"
	prts=() pids=()
	for a in 1 2; do
		careful agent 201 POST /agents/register "{\"name\":\"cl-$tag-$i-$a\"}" || continue 2
		agt=$(j .agent_id) k="X-API-Key: $(j .api_key)"
		ok agent "$agt"
		careful claimcode 200 POST /agents/me/claim-code "" "$k" || continue 2
		careful claim 200 POST /auth/claim "{\"claim_code\":\"$(j .claim_code)\"}" "$oauth" || continue 2
		ok claim "$agt"
		careful webhook 201 POST /webhooks "{\"url\":\"$hook/a/$agt\",\"events\":$agent_events}" "$k" ||
			continue 2
		ok webhook "$(j .id)"
		careful accept 200 POST "/studies/$sid/accept" "" "$k" || continue 2
		prt=$(j .participation_id)
		pid=$(j .study_url | sed -n 's/.*participant_id=\(anon_[0-9a-f]*\).*/\1/p')
		ok accept "$prt"
		prts+=("$prt") pids+=("$pid")
		[ $swept = 1 ] && [ $a = 2 ] && break
		careful complete 200 POST "/studies/$sid/complete" "{\"completion_code\":\"done-$i\"}" "$k" ||
			continue 2
		ok complete "$prt"
	done
	if [ $swept = 1 ]; then
		# 50 h ago: past the 24 h limit and past the 48 h auto-approval
		fixture participations-backdate 180000 "$sid" || continue
		echo "due auto ${prts[0]}" >>"$log"
		echo "due timeout ${prts[1]}" >>"$log"
		continue
	fi
	careful approve 200 POST "/studies/$sid/participants/${pids[0]}/approve" \
		'{"reason":"Thanks."}' "$auth" && ok approve "${prts[0]}"
	careful reject 200 POST "/studies/$sid/participants/${pids[1]}/reject" \
		'{"reason":"Too short.","category":"low_effort"}' "$auth" && ok reject "${prts[1]}"
done
