import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gameai.store import ModelStore, StoreUnavailable
from gameai.store.errors import StoreError
from gameai.store.keys import Keys
from gameai.store.urls import parse_store_url, redact


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://:s3cret@db:6379/2", "redis://:***@db:6379/2"),
    ("redis://alice:s3cret@db", "redis://alice:***@db"),
    ("rediss://:s3cret@db:6380/0?ssl_cert_reqs=none", "rediss://:***@db:6380/0?ssl_cert_reqs=none"),
    ("unix:///run/redis.sock?password=s3cret&db=3", "unix:///run/redis.sock?password=***&db=3"),
    ("unix://:s3cret@/run/redis.sock", "unix://:***@/run/redis.sock"),
    ("redis://:p@ss/w?rd@db:6379/0", "redis://:***@db:6379/0"),
    ("redis://db:6379/0", "redis://db:6379/0"),
])
def test_redact_hides_every_password(url, shown):
    assert redact(url) == shown


@given(st.text(alphabet=st.characters(codec="ascii", exclude_characters="\r\n\t "),
               min_size=4, max_size=30))
def test_no_password_survives_redaction_or_parse_errors(password):
    url = f"redis://:{password}@127.0.0.1:6379/0"
    assume(password not in "redis://:***@127.0.0.1:6379/0")
    assert password not in redact(url)
    try:
        parse_store_url(url)
    except StoreUnavailable as e:
        assert password not in str(e)


@pytest.mark.parametrize(("url", "reason"), [
    ("http://db:6379", "scheme must be one of"),
    ("redis://db/abc", "db must be a whole number"),
    ("redis://db:6379/0?db=1", "db is given twice"),
    ("redis://db?timeout=3", "unknown option 'timeout'"),
    ("redis://:6379", "host is missing"),
    ("unix://", "needs the socket path"),
    ("redis://db:99999/0", "host or port is malformed"),
    ("", "empty"),
])
def test_malformed_urls_are_named_with_the_reason(url, reason):
    with pytest.raises(StoreUnavailable, match=reason):
        ModelStore.from_url(url)


def test_parse_reads_db_and_password():
    u = parse_store_url("redis://:pw@db:6379/5")
    assert (u.scheme, u.db, u.has_password, u.redacted) == ("redis", 5, True,
                                                            "redis://:***@db:6379/5")
    assert parse_store_url("unix:///x.sock?db=2").db == 2


def test_store_url_property_is_redacted():
    store = ModelStore.from_url("redis://:topsecret@127.0.0.1:1/0")
    assert store.url == "redis://:***@127.0.0.1:1/0" and "topsecret" not in repr(store)


def test_every_key_lives_under_the_prefix():
    k = Keys("blue")
    names = [k.counter, k.events, k.games, k.next("g"), k.index("g"), k.payload("g", 3),
             k.aliases("g"), k.weight("g"), k.history("g"), k.deleted("g"), k.token("g", "t")]
    assert all(n.startswith("blue:") for n in names) and len(set(names)) == len(names)
    assert k.payload("g", 12) == k.payload_prefix("g") + "12"


@pytest.mark.parametrize("prefix", ["", "has space", "x" * 65, "-lead"])
def test_bad_prefix_is_refused(prefix):
    with pytest.raises(StoreError, match="invalid store prefix"):
        Keys(prefix)
