#!/bin/bash
# A careful client of tests/cluster/cluster.sh: registers agents through the
# balancer, an Idempotency-Key on every POST, each retried with the same key
# on a transport error or 502/503/504 (up to 60 tries, 0.25 s apart), then
# sets each agent's bio the same way.  Logs one line an outcome to LOG:
#   ok KEY AGENT_ID MS   (the final, acknowledged answer; MS: that try's time)
#   retry KEY STATUS     (000: a transport error)
#   gaveup KEY STATUS
# Usage: client.sh BASE_URL LOG TAG; runs until SIGTERM.
set -u
base=$1 log=$2 tag=$3
stop=0
trap 'stop=1' TERM INT
post() {	# post PATH BODY KEY [AUTH]: sets st, ms, body
	local out
	out=$(curl -s -m 45 -o - -w '\n%{http_code} %{time_total}' -X POST "$base$1" \
		-H 'Content-Type: application/json' -H "Idempotency-Key: $3" \
		${4:+-H "X-API-Key: $4"} --data "$2" 2>/dev/null)
	body=${out%$'\n'*}
	set -- ${out##*$'\n'}
	st=${1:-000}
	ms=$(awk -v t="${2:-0}" 'BEGIN { printf "%d", t * 1000 }')
}
careful() {	# careful PATH BODY KEY [AUTH]: 0 when answered under 500
	local try
	for try in $(seq 1 60); do
		post "$@"
		case $st in
		000|502|503|504) echo "retry $3 $st" >>"$log"; sleep 0.25;;
		*) return 0;;
		esac
	done
	echo "gaveup $3 $st" >>"$log"
	return 1
}
i=0
while [ $stop = 0 ]; do
	i=$((i + 1))
	key=$(cat /proc/sys/kernel/random/uuid)
	careful /api/v1/agents/register "{\"name\":\"cl-$tag-$i\"}" "$key" || continue
	if [ "$st" != 201 ]; then
		echo "refused $key $st" >>"$log"
		continue
	fi
	id=$(printf '%s' "$body" | sed -n 's/.*"agent_id":"\([^"]*\)".*/\1/p')
	apikey=$(printf '%s' "$body" | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p')
	echo "ok $key $id $ms" >>"$log"
	key=$(cat /proc/sys/kernel/random/uuid)
	careful /api/v1/profile/bio "{\"bio\":\"A careful client, number $i of $tag.\"}" "$key" "$apikey" &&
		[ "$st" = 200 -o "$st" = 202 ] && echo "bio $key $id $ms" >>"$log"
done
