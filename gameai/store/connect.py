"""Open the model store the way every process does: from settings, or embedded.

With a URL (``--store``, ``GAMEAI_STORE_URL`` or the file named by
``GAMEAI_STORE_URL_FILE``) the store connects to that Redis. With none, it uses a real
``redis-server`` on a unix socket under ``DATA_DIR/redis`` with append-only persistence:

    settings = StoreSettings.load(vars(args))  # --store, --store-file, --data-dir, ...
    with open_store(settings) as store:
        ...

The embedded server is shared: processes that use the same data directory (``gameai up``,
a trainer, an ops command) all talk to one server, started by the first and shut down by
the last. Two file locks in ``DATA_DIR/redis`` arrange this: every user holds
``users.lock`` shared while it runs; ``start.lock`` serialises starting and stopping; a
user that leaves and can then take ``users.lock`` exclusively is the last, and stops the
server (a clean SHUTDOWN, so the append-only file is flushed). ``managed.pid`` records
which server this protocol started: a server some other tool runs on the same socket is
used but never stopped. Two servers never write the same files, and nobody's server
vanishes under them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from gameai.settings import Setting, read
from gameai.store.embedded import RedisServer
from gameai.store.errors import StoreUnavailable
from gameai.store.store import ModelStore

LOCK_TIMEOUT = 30.0


@dataclass(frozen=True)
class StoreSettings:
    """Where the store lives. ``url`` ``None`` means the embedded server in ``data_dir``."""

    url: str | None = None
    prefix: str = "gameai"
    data_dir: Path = field(default_factory=lambda: default_data_dir())
    timeout: float = 2.0
    retries: int = 3

    @classmethod
    def load(cls, flags: Mapping[str, Any] | None = None,
             environ: Mapping[str, str] | None = None) -> StoreSettings:
        """The store settings (:data:`STORE`) from flags over the environment.

        Args:
            flags: by setting name: ``store_url``, ``store_file``, ``store_prefix``,
                ``data_dir`` (``None``: not given).

        Raises:
            SettingsError: a value is unusable, the URL file cannot be read or is empty, or
                both ``GAMEAI_STORE_URL`` and ``GAMEAI_STORE_URL_FILE`` are set.
        """
        values = read(STORE, flags, environ)
        return cls(url=values["store_url"], prefix=values["store_prefix"],
                   data_dir=values["data_dir"])

    @property
    def where(self) -> str:
        """Where the store is, for messages: the URL with its password hidden, or the
        embedded server's directory."""
        from gameai.store.urls import redact

        return redact(self.url) if self.url else f"embedded Redis in {self.data_dir}"


def check_store_url(text: str) -> str:
    url = text.strip()
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("must start with redis://, rediss:// or unix://")
    return url


def check_prefix(text: str) -> str:
    prefix = text.strip()
    if not prefix or any(c.isspace() for c in prefix):
        raise ValueError("must be a non-empty word without spaces")
    return prefix


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``GAMEAI_DATA_DIR``, else ``$XDG_DATA_HOME/gameai``, else ``~/.local/share/gameai``."""
    env = os.environ if environ is None else environ
    if env.get("GAMEAI_DATA_DIR"):
        return Path(env["GAMEAI_DATA_DIR"]).expanduser()
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "gameai"


STORE_URL = Setting("store_url", "GAMEAI_STORE_URL", "--store", check_store_url, None,
                    file_variable="GAMEAI_STORE_URL_FILE", file_flag="--store-file")
STORE_PREFIX = Setting("store_prefix", "GAMEAI_STORE_PREFIX", "--store-prefix", check_prefix,
                       "gameai")
DATA_DIR = Setting("data_dir", "GAMEAI_DATA_DIR", "--data-dir", lambda t: Path(t).expanduser(),
                   default_data_dir)
STORE = (STORE_URL, STORE_PREFIX, DATA_DIR)  # every process that opens the store has these


@contextlib.contextmanager
def open_store(settings: StoreSettings) -> Iterator[ModelStore]:
    """The store for ``settings``, closed (and the embedded server released) on exit."""
    with (store_url(settings) as url,
          ModelStore.from_url(url, prefix=settings.prefix, timeout=settings.timeout,
                              retries=settings.retries) as store):
        yield store


@contextlib.contextmanager
def store_url(settings: StoreSettings) -> Iterator[str]:
    """The URL of the store ``settings`` name: theirs, or the shared embedded Redis's,
    held (and released on exit) as :func:`embedded_redis` does."""
    if settings.url:
        yield settings.url
        return
    with embedded_redis(settings.data_dir) as url:
        yield url


@contextlib.contextmanager
def embedded_redis(data_dir: str | os.PathLike[str]) -> Iterator[str]:
    """The URL of the shared embedded Redis for ``data_dir``, started if nobody runs it,
    and stopped on exit if nobody else uses it then."""
    server = RedisServer(Path(data_dir).expanduser() / "redis", persist=True)
    server.data_dir.mkdir(parents=True, exist_ok=True)
    with open(server.data_dir / "users.lock", "a+") as users:
        _flock(users, fcntl.LOCK_SH, "users.lock")
        owned = None
        try:
            with _locked(server.data_dir / "start.lock"):
                if not server.answers_ping():
                    owned = server.start()
                    assert owned.process is not None
                    _marker(server).write_text(f"{owned.process.pid}\n")
            yield server.url
        finally:
            fcntl.flock(users, fcntl.LOCK_UN)
            _stop_if_last(users, server, owned)


def _stop_if_last(users: IO[str], server: RedisServer, owned: RedisServer | None) -> None:
    try:
        fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # someone else still uses it; the last one out stops it
    try:
        with _locked(server.data_dir / "start.lock"):
            if owned is not None and owned.process is not None:
                owned.stop()
                _marker(server).unlink(missing_ok=True)
            elif server.answers_ping() and _is_managed(server):
                _shutdown(server)
                _marker(server).unlink(missing_ok=True)
    finally:
        fcntl.flock(users, fcntl.LOCK_UN)


def _marker(server: RedisServer) -> Path:
    """Holds the pid of the redis-server this protocol started, so the last user stops
    only that one, never a server some other tool started on the same socket."""
    return server.data_dir / "managed.pid"


def _is_managed(server: RedisServer) -> bool:
    try:
        recorded = int(_marker(server).read_text())
    except (OSError, ValueError):
        return False
    client = redis.Redis(unix_socket_path=str(server.socket_path), socket_timeout=2.0)
    try:
        return int(client.info("server")["process_id"]) == recorded
    except (redis.RedisError, KeyError, ValueError):
        return False
    finally:
        client.close()


def _shutdown(server: RedisServer, timeout: float = 10.0) -> None:
    """Stop a server another process started: SHUTDOWN flushes the append-only file, then
    the server removes its socket as it exits."""
    client = redis.Redis(unix_socket_path=str(server.socket_path), socket_timeout=timeout,
                         retry=Retry(NoBackoff(), 0))  # the lost connection is the reply
    with contextlib.suppress(redis.ConnectionError):
        client.shutdown()
    client.close()
    deadline = time.monotonic() + timeout
    while server.socket_path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as f:
        _flock(f, fcntl.LOCK_EX, path.name)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _flock(f: IO[str], mode: int, name: str) -> None:
    deadline = time.monotonic() + LOCK_TIMEOUT
    while True:
        try:
            fcntl.flock(f, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise StoreUnavailable(f"the embedded Redis is busy: {name} held for over "
                                       f"{LOCK_TIMEOUT:.0f} s") from None
            time.sleep(0.05)
