"""``gameai models ...``: list, inspect and steer the versions in the model store.

Every action takes ``--game G`` and the store options (``--store URL`` or
``GAMEAI_STORE_URL``/``GAMEAI_STORE_URL_FILE``; with none, the embedded Redis under
``--data-dir``). Errors are one line on stderr and a non-zero exit: 1 when the store
refused (unknown version, corrupt model, a rule), 2 for a usage error or an unknown game,
3 when the store cannot be reached. A failed command changes nothing.
"""

from __future__ import annotations

import argparse
import getpass
import json
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gameai.cli.common import STORE_DOWN, USAGE, CommandError, memory_option, write_atomically

if TYPE_CHECKING:
    from gameai.store import ModelStore, Rollout


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai models`` and its actions to ``gameai``."""
    p = sub.add_parser("models", help="list, inspect and roll out model versions",
                       description="Manage the model store: versions, aliases, canary, "
                       "history, export/import and retention.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--game", required=True, help="tictactoe, mnk-4x5-4, ...")
    common.add_argument("--store", dest="store_url", metavar="URL", help="redis://, rediss:// "
                        "or unix:// URL (default: $GAMEAI_STORE_URL, else the embedded Redis)")
    common.add_argument("--store-file", metavar="FILE", help="read the store URL from this "
                        "file (default: $GAMEAI_STORE_URL_FILE)")
    common.add_argument("--data-dir", metavar="DIR", help="embedded Redis data when no URL is "
                        "set (default: $GAMEAI_DATA_DIR or ~/.local/share/gameai)")
    common.add_argument("--store-prefix", "--prefix", dest="store_prefix",
                        help="key prefix (default: $GAMEAI_STORE_PREFIX or gameai)")
    common.add_argument("--json", action="store_true", help="print JSON")

    def action(name: str, help: str, *, audited: bool = False) -> argparse.ArgumentParser:
        a = actions.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                               parents=[common])
        if audited:
            a.add_argument("--by", default=None, help="who makes the change, for the history "
                           "(default: user@host)")
        a.set_defaults(func=run, action=name)
        return a

    action("list", "versions, aliases and canary weight of a game")
    action("show", "one version's metadata and evaluation").add_argument(
        "--version", required=True, help="a number, an alias or 'latest'")
    a = action("promote", "point an alias (production) at a version; production is then "
               "pinned: the trainer's auto-promotion holds off until 'release'", audited=True)
    a.add_argument("--version", required=True, help="a number, an alias or 'latest'")
    a.add_argument("--alias", default="production")
    a.add_argument("--no-pin", action="store_true", help="leave production unpinned")
    a = action("rollback", "point an alias back at its previous version; production is then "
               "pinned, as by promote", audited=True)
    a.add_argument("--alias", default="production")
    a.add_argument("--no-pin", action="store_true", help="leave production unpinned")
    action("pin", "pin production where it is: auto-promotion holds off", audited=True)
    action("release", "release the pin on production: auto-promotion may move it again",
           audited=True)
    a = action("canary", "send a share of traffic to a canary version", audited=True)
    a.add_argument("--version", help="the canary version (default: keep the current one)")
    a.add_argument("--weight", type=int, required=True, help="percent of traffic, 0-100")
    a = action("shadow", "mirror a share of production's live best-move queries to a "
               "candidate version off the request path, and record how often it agrees with "
               "production and plays optimally (it never answers a client)", audited=True)
    a.add_argument("--version", help="the shadow version (default: keep the current one)")
    a.add_argument("--share", type=int, required=True, help="percent of production's "
                   "best-move queries mirrored, 0-100 (0 stops shadowing)")
    action("history", "every alias change, oldest first").add_argument(
        "--alias", help="only this alias")
    a = action("export", "write one version's exact bytes to a file")
    a.add_argument("--version", required=True)
    a.add_argument("--out", required=True, type=Path, metavar="FILE")
    a.add_argument("--force", action="store_true", help="replace FILE if it exists")
    a = action("import", "publish a model file as a new version", audited=True)
    a.add_argument("file", type=Path, metavar="FILE")
    a.add_argument("--judged", type=Path, metavar="REPORT", help="the file's judged figures "
                   "to show as the version's own (models show, the level picker): the JSON "
                   "of 'gameai evaluate FILE --judge-games N --json', made of this very file")
    a = action("gc", "delete old versions (never aliased or recently used ones)", audited=True)
    a.add_argument("--keep", type=int, required=True, help="keep the newest N versions")
    a.add_argument("--window-days", type=float, default=7.0, help="also keep versions the "
                   "history names within this many days (default 7)")
    a.add_argument("--dry-run", action="store_true", help="only say what would be deleted")
    a = action("publish-exact", "build the exact solver's model of a game whose solver table "
               "fits the memory limit, evaluate it and publish it as a version (algorithm "
               "'solver': exact, not learned)", audited=True)
    a.add_argument("--promote", action="store_true", help="also point production at it "
                   "(pinned, as by promote, unless --no-pin)")
    a.add_argument("--no-pin", action="store_true", help="with --promote: leave production "
                   "unpinned")
    memory_option(a)


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("store", help="time the model store's operations on a private Redis")
    p.add_argument("-n", type=int, default=300, help="calls per operation (default 300)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_store)


def run_bench_store(args: argparse.Namespace) -> int:
    from gameai.bench import store as bench

    if args.n < 1:
        raise CommandError(f"-n must be at least 1, not {args.n}", USAGE)
    figures = bench.run(n=args.n, progress=not args.json)
    if args.json:
        _print_json(figures)
    else:
        for key, value in figures.items():
            print(f"{key:>26}: {value:,}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Open the store, run the action, and turn store errors into one-line failures."""
    from gameai.games import get_game
    from gameai.models import CorruptModel
    from gameai.store import StoreError, StoreUnavailable
    from gameai.store.connect import StoreSettings, open_store

    game = get_game(args.game).name  # an unknown game fails here, naming it (exit 2)
    try:
        settings = StoreSettings.load(vars(args))
        with open_store(settings) as store:
            return int(ACTIONS[args.action](store, game, args) or 0)
    except StoreUnavailable as e:
        raise CommandError(str(e), STORE_DOWN) from e
    except (StoreError, CorruptModel) as e:
        raise CommandError(str(e)) from e


def _list(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    versions, rollout = store.versions(game=game), store.rollout(game=game)
    shadow = _shadow_report(store, game, rollout)
    if args.json:
        _print_json({"game": game, "versions": [r.to_json() for r in versions],
                     "aliases": rollout.aliases, "canary_weight": rollout.canary_weight,
                     "pin": rollout.pin.to_json() if rollout.pin else None,
                     "shadow": None if shadow is None else
                     {k: v for k, v in shadow.items() if k != "text"}})
        return
    print(f"{game} in {store.url}: {len(versions)} version(s)")
    aliases = ", ".join(f"{a} -> {v}" for a, v in sorted(rollout.aliases.items())) or "none"
    print(f"aliases: {aliases}; canary weight {rollout.canary_weight}%")
    if shadow is not None:
        print(f"shadow at {shadow['share']}% of production's best-move queries: "
              f"{shadow['text']}")
    print(f"production {rollout.pin.describe()}; auto-promotion holds off until "
          f"'gameai models release --game {game}'" if rollout.pin
          else "production not pinned: the trainer may promote a better version")
    if versions:
        print(f"{'version':>7}  {'kind':<5}  {'algorithm':<10}  {'games':>10}  "
              f"{'created':<20}  {'sha256':<12}  evaluation")
    for r in versions:
        print(f"{r.version:>7}  {r.kind:<5}  {r.algorithm:<10}  "
              f"{r.info.get('games_played', 0):>10,}  {r.info.get('created_at') or '':<20}  "
              f"{r.sha256[:12]}  {_figures(r.evaluation)}")


def _show(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    record = store.require(game=game, ref=args.version)
    aliases = sorted(a for a, v in store.rollout(game=game).aliases.items()
                     if v == record.version)
    out = {"game": game, **record.to_json(), "aliases": aliases, "info": record.info}
    if args.json:
        _print_json(out)
        return
    for key, value in out.items():
        if key in ("info", "evaluation"):
            continue
        print(f"{key:>15}: {value}")
    extra = {k: v for k, v in record.info.items() if k not in out and k != "game"}
    for key, value in extra.items():
        print(f"{key:>15}: {json.dumps(value) if isinstance(value, dict) else value}")
    print(f"{'evaluation':>15}: {_figures(record.evaluation) or '-'}")


def _promote(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    version = store.require(game=game, ref=args.version).version
    change = store.set_alias(game=game, alias=args.alias, version=version, by=_by(args),
                             pin=_pins(args))
    _print_change(game, change.to_json(), args, pinned=_pins(args))


def _rollback(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    change = store.rollback(game=game, alias=args.alias, by=_by(args), pin=_pins(args))
    _print_change(game, change.to_json(), args, pinned=_pins(args))


def _pins(args: argparse.Namespace) -> bool:
    """An operator's move of production pins it (unless ``--no-pin``)."""
    return args.alias == "production" and not args.no_pin


def _pin(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    pin = store.pin(game=game, by=_by(args))
    if args.json:
        _print_json({"game": game, "pin": pin.to_json()})
    else:
        print(f"{game} production {pin.describe()}; auto-promotion holds off until released")


def _release(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    pin = store.release(game=game, by=_by(args))
    if args.json:
        _print_json({"game": game, "released": pin.to_json() if pin else None})
    elif pin is None:
        print(f"{game} production was not pinned: nothing changed")
    else:
        print(f"{game} production released (it was {pin.describe()}); the trainer may "
              "promote a better version again")


def _canary(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    version = None if args.version is None else store.require(game=game, ref=args.version).version
    store.set_canary(game=game, version=version, weight=args.weight, by=_by(args))
    rollout = store.rollout(game=game)
    if args.json:
        _print_json({"game": game, "canary": rollout.canary,
                     "canary_weight": rollout.canary_weight})
    else:
        print(f"{game} canary: version {rollout.canary}, {rollout.canary_weight}% of traffic")


def _shadow(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    version = None if args.version is None else store.require(game=game, ref=args.version).version
    store.set_shadow(game=game, version=version, share=args.share, by=_by(args))
    rollout = store.rollout(game=game)
    if args.json:
        _print_json({"game": game, "shadow": rollout.shadow,
                     "shadow_share": rollout.shadow_share})
    else:
        print(f"{game} shadow: version {rollout.shadow}, {rollout.shadow_share}% of "
              "production's best-move queries mirrored (never answered with); 'gameai models "
              f"list --game {game}' shows what it finds")


def _shadow_report(store: ModelStore, game: str, rollout: Rollout) -> dict[str, Any] | None:
    """The shadow alias, its share, and what shadowing found against the production
    served now (or the most compared production)."""
    version = rollout.shadow
    if version is None:
        return None
    reports = store.shadow_reports(game=game, version=version)
    current = next((r for r in reports if r.production == rollout.production),
                   reports[0] if reports else None)
    return {"version": version, "share": rollout.shadow_share,
            "report": current.to_json() if current else None,
            "text": current.describe() if current else f"version {version}: nothing "
            "compared yet"}


def _history(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    changes = [c for c in store.history(game=game) if args.alias in (None, c.alias)]
    if args.json:
        _print_json({"history": [c.to_json() for c in changes]})
        return
    for c in changes:
        print(f"{c.at}  {c.alias}: {_v(c.from_version)} -> {_v(c.to_version)}  "
              f"({c.action} by {c.by})")
    if not changes:
        print(f"{game}: no alias changes")


def _export(store: ModelStore, game: str, args: argparse.Namespace) -> None:

    version = store.require(game=game, ref=args.version).version
    record, data = store.verified_payload(game=game, version=version)
    out: Path = args.out
    if out.exists() and not args.force:
        raise CommandError(f"{out} exists; add --force to replace it")
    write_atomically(out, data)
    if args.json:
        _print_json({"game": game, "version": version, "file": str(out), "size": len(data),
                     "sha256": record.sha256})
    else:
        print(f"exported {game} version {version} to {out} ({len(data):,} bytes, "
              f"sha256 {record.sha256})")


def _import(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    from gameai.models import CorruptModel, load_model
    from gameai.store.errors import InvalidArgument

    path: Path = args.file
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CommandError(f"cannot read {path}: {e.strerror}") from e
    try:
        model = load_model(data)
    except CorruptModel as e:
        raise CommandError(f"refused to import {path}: {e}") from e
    if model.game.name != game:
        raise CommandError(f"{path} holds a {model.game.name} model, not {game}")
    judged = _judged_report(args.judged, data) if args.judged else None
    try:
        record = store.publish(data, by=f"{_by(args)} (import of {path.name})"[:200],
                               judged=judged)
    except InvalidArgument as e:
        raise CommandError(f"refused to import {path}: {e}") from e
    if args.json:
        _print_json({"game": game, **record.to_json()})
    else:
        print(f"imported {path} as {game} version {record.version} (sha256 {record.sha256})")


def _judged_report(path: Path, data: bytes) -> dict[str, Any]:
    """The judged measures in ``path`` (``gameai evaluate --judge-games --json``'s report),
    made of the model whose bytes are ``data`` (never another model's figures)."""
    import hashlib

    try:
        report = json.loads(path.read_text())
    except OSError as e:
        raise CommandError(f"--judged: cannot read {path}: {e.strerror}") from e
    except ValueError as e:
        raise CommandError(f"--judged: {path} is not JSON: {e}") from e
    if not isinstance(report, dict) or not isinstance(report.get("judged"), dict):
        raise CommandError(f"--judged: {path} holds no judged measures (make it with "
                           f"'gameai evaluate FILE --judge-games N --json')")
    digest = hashlib.sha256(data).hexdigest()
    if report.get("sha256") != digest:
        raise CommandError(f"--judged: {path} judged another file (sha256 "
                           f"{str(report.get('sha256'))[:12]}), not this one ({digest[:12]})")
    return dict(report["judged"])


def _gc(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    window = args.window_days * 86400
    if args.dry_run:
        deleted = store.gc_plan(game=game, keep=args.keep, window_seconds=window)
    else:
        deleted = store.gc(game=game, keep=args.keep, window_seconds=window, by=_by(args))
    kept = [r.version for r in store.versions(game=game) if r.version not in deleted]
    reasons = store.gc_keeps(game=game, keep=args.keep, window_seconds=window)
    why = {v: reasons.get(v, ["published meanwhile"]) for v in kept}
    if args.json:
        _print_json({"game": game, "deleted": deleted, "kept": kept, "dry_run": args.dry_run,
                     "kept_because": {str(v): r for v, r in why.items()}})
        return
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{game}: {verb} {_versions_text(deleted)}; kept {_versions_text(kept)}")
    for version, because in why.items():
        print(f"  kept {version}: {'; '.join(because)}")
    if not deleted and kept:
        print(f"  (--keep {args.keep} keeps the newest; --window-days {args.window_days:g} "
              "keeps what an alias moved to or from in that many days)")


def _publish_exact(store: ModelStore, game: str, args: argparse.Namespace) -> None:
    import time

    from gameai.games import TooLarge, get_game
    from gameai.trainer.evaluation.exact import exact_model

    started = time.perf_counter()
    try:
        model = exact_model(get_game(game))
    except TooLarge as e:
        raise CommandError(f"cannot build the exact model of {game}: {e}") from e
    seconds = time.perf_counter() - started
    data = model.to_bytes()
    record = store.publish(data, by=f"{_by(args)} (publish-exact)"[:200])
    change = None
    if args.promote:
        change = store.set_alias(game=game, alias="production", version=record.version,
                                 by=_by(args), pin=not args.no_pin)
    report = model.info.evaluation
    if args.json:
        _print_json({"game": game, **record.to_json(), "seconds": round(seconds, 3),
                     "promoted": change is not None, "evaluation": report})
        return
    print(f"published the exact solver's model of {game} as version {record.version} "
          f"({len(data):,} bytes, built and evaluated in {seconds:.1f} s): algorithm solver, "
          "not learned")
    print(f"evaluation: {_figures(report)}")
    if change is not None:
        pinned = "" if args.no_pin else " (pinned: auto-promotion holds off until 'gameai " \
            f"models release --game {game}')"
        print(f"{game} production: {_v(change.from_version)} -> {record.version}{pinned}")


ACTIONS = {"list": _list, "show": _show, "promote": _promote, "rollback": _rollback,
           "publish-exact": _publish_exact, "pin": _pin, "release": _release,
           "canary": _canary, "shadow": _shadow, "history": _history,
           "export": _export, "import": _import, "gc": _gc}


def _by(args: argparse.Namespace) -> str:
    if args.by:
        return str(args.by)
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def _print_change(game: str, change: dict[str, Any], args: argparse.Namespace, *,
                  pinned: bool = False) -> None:
    held = " (pinned: auto-promotion holds off until 'gameai models release')" if pinned \
        else ""
    if args.json:
        _print_json({"game": game, **change, **({"pinned": True} if pinned else {})})
    elif change["from"] == change["to"]:
        print(f"{game} {change['alias']} already at version {change['to']}{held}")
    else:
        print(f"{game} {change['alias']}: {_v(change['from'])} -> {_v(change['to'])}{held}")


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data) + "\n")


def _v(version: int | None) -> str:
    return "none" if version is None else str(version)


def _versions_text(numbers: list[int]) -> str:
    from gameai.store.policy import describe_versions

    return describe_versions(numbers).replace("no versions stored", "nothing")


def _figures(evaluation: dict[str, Any]) -> str:
    """The evaluation's figures on one line: the scalar ones, then the judged strength
    (n-tuple versions: against perfect and noisy opponents, with intervals)."""
    from gameai.models.info import describe_judged

    text = " ".join(f"{k}={v}" for k, v in evaluation.items() if not isinstance(v, dict | list))
    judged = evaluation.get("judged")
    if isinstance(judged, dict) and judged.get("measures"):
        text += f" judged at {judged.get('policy', 'its default')}: {describe_judged(judged)}"
    return text
