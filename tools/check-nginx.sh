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
