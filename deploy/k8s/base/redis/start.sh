#!/bin/sh
# Start Redis with the password from a secret file: never on the command line (visible in
# ps) and never a default. Refuses a missing, short or placeholder password with a message
# that says how to make one. Extra arguments go to redis-server (tests pass --port, --dir).
set -eu

conf="${REDIS_CONF:-/usr/local/etc/redis/redis.conf}"
secret="${REDIS_PASSWORD_FILE:-/run/secrets/redis_password}"
fix="generate credentials with deploy/make-secrets.sh (Compose) or deploy/k8s/make-credentials.sh (Kubernetes)"

if [ ! -r "$secret" ]; then
    echo "redis: cannot read the password file $secret: $fix" >&2
    exit 1
fi
password="$(cat "$secret")"
case "$password" in
    *CHANGE-ME*)
        echo "redis: the password in $secret is the placeholder: $fix" >&2
        exit 1 ;;
    *[!A-Za-z0-9._~-]*)
        echo "redis: the password in $secret may only use A-Z a-z 0-9 . _ ~ - (it goes into a URL): $fix" >&2
        exit 1 ;;
esac
if [ "${#password}" -lt 16 ]; then
    echo "redis: the password in $secret is shorter than 16 characters: $fix" >&2
    exit 1
fi

umask 077
auth="$(mktemp "${TMPDIR:-/tmp}/redis-auth.XXXXXX")"
printf 'requirepass %s\n' "$password" > "$auth"
exec redis-server "$conf" --include "$auth" "$@"
