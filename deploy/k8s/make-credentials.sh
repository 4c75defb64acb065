#!/usr/bin/env bash
# Make the credentials of a Kubernetes install (never committed; see overlays/.gitignore):
#   make-credentials.sh                    -> overlays/production/credentials.env
#                                             (random Redis password, its store URL, admin token)
#   make-credentials.sh --external URL     -> overlays/external-redis/credentials.env
#                                             (your Redis URL, a random admin token)
# An existing credentials.env is never replaced: delete it first to rotate.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

random() { head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }

if [ "${1:-}" = "--external" ]; then
    url="${2:?usage: make-credentials.sh --external redis://... | rediss://... | unix://...}"
    case "$url" in
        redis://*|rediss://*|unix://*) ;;
        *) echo "make-credentials.sh: the store URL must start with redis://, rediss:// or unix://" >&2
           exit 2 ;;
    esac
    out="$here/overlays/external-redis/credentials.env"
    content="store-url=$url
admin-token=$(random)"
elif [ $# -eq 0 ]; then
    out="$here/overlays/production/credentials.env"
    password="$(random)"
    content="redis-password=$password
store-url=redis://:$password@gameai-redis:6379/0
admin-token=$(random)"
else
    echo "usage: make-credentials.sh [--external URL]" >&2
    exit 2
fi

if [ -e "$out" ]; then
    echo "kept    $out (exists; delete it to make new credentials)"
    exit 0
fi
(umask 077 && printf '%s\n' "$content" > "$out")
echo "created $out"
