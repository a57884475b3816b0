#!/usr/bin/env bash
# nginx -t over the production site files exactly as INSTALL.md installs
# them (nginx/arps-http.conf, nginx/arps.conf, the rendered arps-api.inc),
# with a throwaway self-signed certificate in place of Let's Encrypt's.
# Run by `make test`; exits non-zero when nginx refuses the configuration.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/logs" "$T/snippets"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" \
    -days 1 -subj /CN=api.example.org 2>/dev/null
sed -e 's|@SOCKET@|/run/arps/arps.sock|' -e 's|@BURST@|60|' "$ROOT/nginx/arps-api.inc" \
    > "$T/snippets/arps-api.inc"
sed -e "s|/etc/letsencrypt/live/api.example.org/fullchain.pem|$T/cert.pem|" \
    -e "s|/etc/letsencrypt/live/api.example.org/privkey.pem|$T/key.pem|" \
    -e "s|/etc/nginx/snippets/arps-api.inc|$T/snippets/arps-api.inc|" \
    "$ROOT/nginx/arps.conf" > "$T/arps.conf"
cat > "$T/nginx.conf" <<CONF
pid $T/nginx.pid;
error_log $T/logs/error.log;
events {}
http {
    include /etc/nginx/mime.types;
    access_log $T/logs/access.log;
    include $ROOT/nginx/arps-http.conf;
    include $T/arps.conf;
}
CONF
nginx -q -t -c "$T/nginx.conf" -p "$T"
echo "nginx: the production site files pass nginx -t"

# Then run them, on loopback ports instead of 80 and 443, with no FastCGI
# pool behind (the API answers nginx's own 503), and check the headers and
# the port-80 refusal of design.md §9.9.
fail() { echo "check-nginx: $*" >&2; exit 1; }
mkdir -p "$T/tmp"
started=
for try in 1 2 3 4 5; do
    P80=$((20000 + RANDOM % 20000)); P443=$((P80 + 1))
    sed -e "s|listen 80;|listen 127.0.0.1:$P80;|" -e '/listen \[::\]:80;/d' \
        "$ROOT/nginx/arps-http.conf" > "$T/arps-http.conf"
    sed -i -e "s|listen 443 ssl http2;|listen 127.0.0.1:$P443 ssl http2;|" \
        -e '/listen \[::\]:443 ssl http2;/d' -e "s|listen 127.0.0.1:[0-9]* ssl http2;|listen 127.0.0.1:$P443 ssl http2;|" \
        "$T/arps.conf"
    cat > "$T/run.conf" <<CONF
pid $T/nginx.pid;
error_log $T/logs/error.log;
events {}
http {
    include /etc/nginx/mime.types;
    access_log $T/logs/access.log;
    client_body_temp_path $T/tmp/body;
    fastcgi_temp_path $T/tmp/fastcgi;
    proxy_temp_path $T/tmp/proxy;
    uwsgi_temp_path $T/tmp/uwsgi;
    scgi_temp_path $T/tmp/scgi;
    include $T/arps-http.conf;
    include $T/arps.conf;
}
CONF
    if nginx -q -c "$T/run.conf" -p "$T" 2>"$T/start.err"; then started=1; break; fi
done
[ -n "$started" ] || fail "cannot start the production files: $(cat "$T/start.err")"
trap 'kill "$(cat "$T/nginx.pid" 2>/dev/null)" 2>/dev/null; sleep 0.2; rm -rf "$T"' EXIT
for i in $(seq 50); do [ -s "$T/nginx.pid" ] && break; sleep 0.1; done

# get URL OUT: the head into OUT.h, the body into OUT.b; prints the status
get() { curl -sk -o "$2.b" -D "$2.h" -w '%{http_code}' --resolve "api.example.org:$P80:127.0.0.1" \
    --resolve "api.example.org:$P443:127.0.0.1" "$1"; }
has() { grep -qi "^$2" "$1.h" || fail "$3: no '$2' in: $(tr -d '\r' < "$1.h" | tr '\n' '|')"; }
hasnt() { ! grep -qi "^$2" "$1.h" || fail "$3: '$2' in: $(tr -d '\r' < "$1.h" | tr '\n' '|')"; }

# port 80: the API is refused with JSON, never redirected
st=$(get "http://api.example.org:$P80/api/v1/agents/me" "$T/a")
[ "$st" = 403 ] || fail "port 80 /api/v1/agents/me answered $st, not 403"
[ "$(cat "$T/a.b")" = '{"detail":"the API is served over HTTPS only; a credential sent over plain HTTP must be treated as leaked: rotate it","error_code":"HTTPS_REQUIRED","status":403}' ] ||
    fail "port 80 body: $(cat "$T/a.b")"
has "$T/a" "Content-Type: application/json" "port 80 /api/"
has "$T/a" "X-Content-Type-Options: nosniff" "port 80 /api/"
has "$T/a" "Cache-Control: no-store" "port 80 /api/"
hasnt "$T/a" "Location:" "port 80 /api/"
st=$(get "http://api.example.org:$P80/api/v1/auth/login?x=1" "$T/a2")
[ "$st" = 403 ] || fail "port 80 POST-less /api/v1/auth/login answered $st"
# the rest of port 80 still redirects (the console), the ACME path is served
st=$(get "http://api.example.org:$P80/" "$T/b")
[ "$st" = 301 ] || fail "port 80 / answered $st, not 301"
has "$T/b" "Location: https://api.example.org/" "port 80 /"
# port 443: HSTS, nosniff and no-store on nginx's own error answers
st=$(get "https://api.example.org:$P443/api/v1/health" "$T/c")
[ "$st" = 503 ] || fail "443 /api/v1/health without a pool answered $st, not 503"
grep -q '"error_code":"SERVICE_UNAVAILABLE"' "$T/c.b" || fail "443 503 body: $(cat "$T/c.b")"
for h in "Strict-Transport-Security: max-age=63072000" "X-Content-Type-Options: nosniff" \
    "Cache-Control: no-store"; do has "$T/c" "$h" "443 /api/v1/health"; done
st=$(get "https://api.example.org:$P443/api/v1" "$T/d")
[ "$st" = 404 ] || fail "443 /api/v1 answered $st"
for h in "Strict-Transport-Security: max-age=63072000" "X-Content-Type-Options: nosniff" \
    "Cache-Control: no-store"; do has "$T/d" "$h" "443 /api/v1"; done
st=$(curl -sk -o "$T/e.b" -D "$T/e.h" -w '%{http_code}' --resolve "api.example.org:$P443:127.0.0.1" \
    -H 'Content-Type: application/json' --data-binary @<(head -c 70000 /dev/zero | tr '\0' a) \
    "https://api.example.org:$P443/api/v1/profile/bio")
[ "$st" = 413 ] || fail "443 70 KB body answered $st"
for h in "Strict-Transport-Security: max-age=63072000" "X-Content-Type-Options: nosniff" \
    "Cache-Control: no-store"; do has "$T/e" "$h" "443 413"; done
st=$(get "https://api.example.org:$P443/elsewhere" "$T/f")
[ "$st" = 404 ] || fail "443 /elsewhere answered $st"
has "$T/f" "Strict-Transport-Security: max-age=63072000" "443 /elsewhere"
# plain HTTP answers carry no HSTS ($arps_hsts is empty for http)
hasnt "$T/a" "Strict-Transport-Security" "port 80 /api/"
echo "nginx: the production files answer /api/ on port 80 with 403 HTTPS_REQUIRED; HSTS, nosniff and no-store on 443"
