#!/usr/bin/env bash
# Make the credentials the Compose stack reads as secrets, in deploy/secrets/ (or $1):
#   redis_password           Redis's password (random, URL-safe)
#   store_url                redis://:<password>@redis:6379/0, what server and trainer read
#   admin_token              bearer token for the server's admin routes
#   grafana_admin_password   Grafana's "admin" user
# An existing file is never replaced, so running it again is safe. To use an external Redis,
# write its URL into store_url yourself (see docs/operations.md).
set -euo pipefail
dir="${1:-$(cd "$(dirname "$0")" && pwd)/secrets}"

random() { head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }

write() {  # write NAME VALUE, unless NAME exists
    local path="$dir/$1"
    if [ -e "$path" ]; then
        echo "kept    $path (exists)"
    else
        # 0644 inside a 0700 directory: containers run as other users and bind-mount the file.
        (umask 022 && printf '%s\n' "$2" > "$path")
        echo "created $path"
    fi
}

mkdir -p "$dir" && chmod 700 "$dir"
write redis_password "$(random)"
write store_url "redis://:$(tr -d '\n' < "$dir/redis_password")@redis:6379/0"
write admin_token "$(random)"
write grafana_admin_password "$(random)"
