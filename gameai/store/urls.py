"""Store URLs: parse and check them, hide their passwords, and open a Redis client.

Accepted forms (password and db may come from the userinfo, the path or the query):

    redis://[[user]:password@]host[:port][/db]
    rediss://[[user]:password@]host[:port][/db][?ssl_cert_reqs=none&ssl_ca_certs=/path]
    unix://[[user]:password@]/path/to/redis.sock[?db=N&password=...]

A password never appears in anything this module returns for display: :func:`redact`
replaces it with ``***`` wherever it is (userinfo or ``password=`` query).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from gameai.store.errors import StoreError, StoreUnavailable

SCHEMES = ("redis", "rediss", "unix")
_QUERY_PASSWORD = re.compile(r"(?i)([?&]password=)[^&#]*")
_QUERY_KEYS = frozenset({"db", "password", "ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile",
                         "ssl_keyfile", "ssl_check_hostname"})


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``; works on malformed URLs too."""
    url = url.strip()
    start = url.find("://") + 3 if "://" in url else 0
    at = url.rfind("@", start)  # the last one: a password may itself hold "@", "?" or "/"
    colon = url.find(":", start, at)
    if at >= 0 and colon >= 0:
        url = f"{url[:colon]}:***{url[at:]}"
    return _QUERY_PASSWORD.sub(r"\1***", url)


@dataclass(frozen=True)
class StoreUrl:
    """A checked store URL. ``url`` is the original (with its password): do not print it;
    print ``redacted``."""

    url: str
    scheme: str
    db: int
    has_password: bool

    @property
    def redacted(self) -> str:
        return redact(self.url)


def parse_store_url(url: str) -> StoreUrl:
    """Check ``url`` thoroughly, since redis-py silently ignores some mistakes (a db of
    ``abc``, an unknown query option).

    Raises:
        StoreUnavailable: the URL is malformed; the message names it, password hidden, and
            says what is wrong.
    """
    shown = redact(url)

    def bad(reason: str) -> StoreUnavailable:
        return StoreUnavailable(f"invalid store URL {shown!r}: {reason}")

    if not isinstance(url, str) or not url.strip():
        raise StoreUnavailable("invalid store URL: it is empty")
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # its message may quote part of the password: say it ourselves
        raise bad("the host or port is malformed (is a special character in the password "
                  "not percent-encoded?)") from None
    if parts.scheme not in SCHEMES:
        raise bad(f"the scheme must be one of {', '.join(s + '://' for s in SCHEMES)}")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - _QUERY_KEYS)
    if unknown:
        raise bad(f"unknown option {unknown[0]!r} (known: {', '.join(sorted(_QUERY_KEYS))})")
    db_text = query.get("db", [""])[-1]
    if parts.scheme == "unix":
        if not parts.path or parts.path == "/":
            raise bad("a unix:// URL needs the socket path, as unix:///run/redis.sock")
    else:
        if not parts.hostname:
            raise bad("the host is missing")
        if port == 0:
            raise bad("port 0 is not a port")
        path = parts.path.strip("/")
        if path:
            if db_text:
                raise bad("the db is given twice (path and ?db=)")
            db_text = path
    if db_text and not (db_text.isascii() and db_text.isdigit() and int(db_text) < 1 << 16):
        raise bad("the db must be a whole number (0, 1, ...)")
    has_password = parts.password is not None or bool(query.get("password", [""])[-1])
    return StoreUrl(url=url, scheme=parts.scheme, db=int(db_text or 0), has_password=has_password)


def connect(url: StoreUrl, *, timeout: float, retries: int,
            health_check_interval: int = 0) -> redis.Redis:
    """A lazily connecting client: socket and connect timeouts of ``timeout`` seconds, and
    ``retries`` retries with jittered exponential backoff (50 ms doubling up to 1 s) on
    connection errors and timeouts, reconnecting each time. Bytes in, bytes out."""
    if timeout <= 0:
        raise StoreUnavailable(f"store timeout must be positive, not {timeout}")
    if retries < 0:
        raise StoreUnavailable(f"store retries must be 0 or more, not {retries}")
    retry = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries)
    return redis.Redis.from_url(
        url.url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=retry,
        health_check_interval=health_check_interval,
        client_name="gameai",
    )


@contextmanager
def redis_errors(url: StoreUrl) -> Iterator[None]:
    """Turn redis-py's errors into the store's, naming the URL with its password hidden."""
    shown = url.redacted
    try:
        yield
    except redis.AuthenticationError as e:
        raise StoreUnavailable(_auth_failure(url)) from e
    except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
        raise StoreUnavailable(f"cannot reach the store at {shown}: {e}") from e
    except redis.ResponseError as e:
        if str(e).startswith(("NOAUTH", "WRONGPASS")):
            raise StoreUnavailable(_auth_failure(url)) from e
        raise StoreError(f"the store at {shown} answered with an error: {e}") from e
    except redis.RedisError as e:
        raise StoreError(f"store error at {shown}: {e}") from e


def _auth_failure(url: StoreUrl) -> str:
    if url.has_password:
        return f"the store at {url.redacted} refused the user name or password"
    return f"the store at {url.redacted} requires a password, and the URL gives none"


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()
