#!/usr/bin/env python3
"""The image's HEALTHCHECK: exit 0 when this container's gameai process says it is alive.

One image runs two roles, so the probe finds out which one from the container's main
process (``/proc/1/cmdline``): ``gameai trainer ...`` answers ``/healthz`` on its metrics
port, anything else is the server, which answers ``/healthz`` on its HTTP port. Ports come
from the command's flags, then the environment, then the defaults of docs/contracts.md.
``gameai-healthcheck URL`` (or ``$GAMEAI_HEALTHCHECK_URL``) probes an explicit URL instead.

Standard library only: it runs in the slim runtime image, every few seconds.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence

TIMEOUT_SECONDS = 2.0
DEFAULT_HTTP_PORT = "8000"
DEFAULT_METRICS_PORT = "9100"


def flag_value(argv: Sequence[str], flag: str) -> str | None:
    """The value of ``--flag V`` or ``--flag=V`` in ``argv`` (the last one wins)."""
    value = None
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
    return value


def health_url(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The ``/healthz`` URL of the gameai process started with ``argv``."""
    explicit = env.get("GAMEAI_HEALTHCHECK_URL")
    if explicit:
        return explicit
    if "trainer" in argv:
        port = flag_value(argv, "--metrics-port") or env.get("GAMEAI_METRICS_PORT") \
            or DEFAULT_METRICS_PORT
    else:
        port = flag_value(argv, "--http-port") or env.get("GAMEAI_HTTP_PORT") \
            or DEFAULT_HTTP_PORT
    return f"http://127.0.0.1:{port}/healthz"


def main_process_argv(path: str = "/proc/1/cmdline") -> list[str]:
    try:
        with open(path, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def probe(url: str, timeout: float = TIMEOUT_SECONDS) -> str | None:
    """``None`` if ``url`` answers 200, else why not (one line)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as e:
        status = e.code
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        return f"{url}: {reason}"
    return None if status == 200 else f"{url}: HTTP {status}"


def main(argv: Sequence[str]) -> int:
    url = argv[0] if argv else health_url(main_process_argv(), os.environ)
    problem = probe(url)
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
