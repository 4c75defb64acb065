#!/usr/bin/env bash
# Regenerate constraints.txt: install the project with its runtime dependencies and the ray
# extra (the Ray cluster image's, `gameai[ray]`) and grpcio-tools into a throw-away venv,
# then pin whatever got installed, plus the build backend. Run after changing a dependency in pyproject.toml; review the diff before committing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3.11}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$root[ray]" grpcio-tools setuptools wheel
{
    sed -n '/^#/p' "$root/constraints.txt"
    "$work/venv/bin/pip" freeze --all --exclude gameai --exclude pip | sort -f
} > "$work/constraints.txt"
mv "$work/constraints.txt" "$root/constraints.txt"
echo "wrote $root/constraints.txt ($(grep -vc '^#' "$root/constraints.txt") pins)"
