"""``gameai bench solver`` for games solved by search: benchmark positions and the empty
board (:mod:`gameai.bench.positions`, :mod:`gameai.games.mnk.search`)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from gameai.bench import CannotBench
from gameai.games.mnk.game import MnkGame

# The classes the targets name, and the time limit each position is given
# (None: until solved); a beginning position is stopped at 10 s, the target's bound.
CLASSES = (("end", "easy", None), ("middle", "easy", None), ("middle", "medium", None),
           ("beginning", "hard", 10.0))
EMPTY_TT_BITS = 26  # 64M slots, 1 GiB: the empty board's search outgrows the default


def run_search_bench(args: argparse.Namespace, game: MnkGame) -> int:
    if (args.positions or args.compare or args.write_sets) and not game.gravity:
        raise CannotBench(f"{game.name}: --positions, --compare and --write-sets take "
                          "gravity games")
    if args.write_sets:
        return run_write_sets(args, game)
    if args.positions:
        return run_file_bench(args, game)
    if args.compare:
        if game.name != "connect-four":
            raise CannotBench("--compare measures against bitbully, which plays Connect Four "
                              f"(6x7) only, not {game.name}")
        return run_compare(args, game)
    if args.against:
        raise CannotBench("--against goes with --positions (or use --compare)")
    if args.empty:
        return _empty_board(args, game)
    if not game.gravity:
        raise CannotBench(f"{game.name} has no benchmark positions (they are drawn for "
                           "gravity games); time its empty board with --empty")
    from tqdm import tqdm

    from gameai.bench.positions import cached_set, time_positions
    from gameai.games.mnk.search import Searcher
    from gameai.host import cache_dir

    load_before = os.getloadavg()
    labeller = Searcher(game)
    rows = []
    for stage, difficulty, limit in CLASSES:
        count = args.beginning_count if stage == "beginning" else args.count
        with tqdm(total=count, desc=f"labelling {stage} {difficulty}", unit=" positions",
                  file=sys.stderr, disable=args.json, leave=False) as bar:

            def labelled(n: int, bar: Any = bar) -> None:
                bar.update(n - bar.n)

            found = cached_set(game, stage=stage, difficulty=difficulty, count=count,
                               seed=args.seed, searcher=labeller,
                               cache_dir=cache_dir(), progress=labelled)
        with tqdm(total=count, desc=f"solving {stage} {difficulty}", unit=" positions",
                  file=sys.stderr, disable=args.json, leave=False) as bar:
            timing = time_positions(game, found, stage=stage, difficulty=difficulty,
                                    time_limit=limit, step=bar.update)
        rows.append(timing.to_json())
    figures: dict[str, Any] = {
        "game": game.name, "seed": args.seed, "classes": rows,
        "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())],
        "wrong": sum(r["wrong"] for r in rows),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        _print_classes(figures)
    return 1 if figures["wrong"] else 0


def _print_classes(figures: dict[str, Any]) -> None:
    load = figures["load_average"]
    print(f"{figures['game']}: benchmark positions (seed {figures['seed']}), each solved "
          f"from an empty table; load average {load[0]} before, {load[3]} after")
    print(f"  {'class':<18} {'positions':>9} {'pos/s':>9} {'mean ms':>10} {'max ms':>10} "
          f"{'cpu ms':>9} {'nodes/s':>11} {'<=2 s':>6} {'<=10 s':>6}")
    for r in figures["classes"]:
        print(f"  {r['stage'] + ' ' + r['difficulty']:<18} {r['positions']:>9} "
              f"{r['positions_per_second']:>9,.1f} {r['mean_ms']:>10,.3f} "
              f"{r['max_ms']:>10,.1f} {r['mean_cpu_ms']:>9,.3f} "
              f"{r['nodes_per_second']:>11,} {r['within_2s']:>6.0%} {r['within_10s']:>6.0%}")
    if figures["wrong"]:
        print(f"  {figures['wrong']} solved scores differ from their labels", file=sys.stderr)


def _empty_board(args: argparse.Namespace, game: MnkGame) -> int:
    """The empty board's exact value, then the centre column's, with progress."""
    from gameai.games.mnk.scores import describe_score
    from gameai.games.mnk.search import Searcher

    load_before = os.getloadavg()
    searcher = Searcher(game, tt_bits=EMPTY_TT_BITS)
    board = game.initial()

    def show(nodes: int, seconds: float, lower: int, upper: int) -> None:
        if not args.json:
            print(f"\r  {seconds:8.0f} s  {nodes:>16,} nodes  {nodes / max(seconds, 1e-9):>12,.0f}"
                  f" nodes/s  score in [{lower}, {upper}]", end="", file=sys.stderr, flush=True)

    c0, t0 = time.process_time(), time.perf_counter()
    score = searcher.score(board, progress=show)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    nodes = searcher.nodes
    centre = board.play(game.cols // 2 + (game.rows - 1) * game.cols)
    t1 = time.perf_counter()
    v = -searcher.score(centre)  # the child's score, seen from X, one ply older below
    centre_score = v - 1 if v > 0 else v + 1 if v < 0 else 0
    outcome, distance = describe_score(game, score, board)
    figures: dict[str, Any] = {
        "game": game.name, "score": score, "outcome": outcome, "distance": distance,
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "nodes": nodes,
        "nodes_per_second": round(nodes / seconds), "tt_bits": EMPTY_TT_BITS,
        "centre_column_score": centre_score,
        "centre_seconds": round(time.perf_counter() - t1, 1),
        "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())],
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(file=sys.stderr)
    print(f"{game.name}, the empty board: {outcome} for X in {distance} plies (score {score})"
          f" in {seconds:,.1f} s ({cpu:,.1f} s of CPU), {nodes:,} nodes, "
          f"{figures['nodes_per_second']:,} nodes/s, a table of 2**{EMPTY_TT_BITS} slots; "
          f"load average {figures['load_average'][0]} before, {figures['load_average'][3]} "
          "after")
    print(f"the centre column scores {centre_score} (solved in {figures['centre_seconds']} s "
          "more)")
    return 0


# -- test-set files, and side by side with bitbully --------------------------------------

BITBULLY_MISSING = ("bitbully is not installed: it is a test dependency, never shipped "
                    "(AGPL-3.0): pip install bitbully==0.0.79, or pip install -e '.[dev]'")


def _bitbully() -> Any:
    """bitbully's C++ core, imported here only: the benchmarks may measure against it, no
    shipped module ever imports it (tests/cli/test_layout.py)."""
    try:
        from bitbully import bitbully_core
    except ImportError as e:
        raise CannotBench(BITBULLY_MISSING) from e
    return bitbully_core


@dataclass
class Times:
    """One solver's times on a set of positions (seconds) and its nodes."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    nodes: int = 0
    wrong: list[int] = field(default_factory=list)  # line numbers whose score differs

    def add(self, wall: float, cpu: float, nodes: int) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)
        self.nodes += nodes

    def to_json(self) -> dict[str, Any]:
        n = len(self.wall)
        cpu = sum(self.cpu)
        return {
            "positions": n, "mean_us": round(1e6 * statistics.fmean(self.wall), 2),
            "median_us": round(1e6 * statistics.median(self.wall), 2),
            "max_us": round(1e6 * max(self.wall), 2),
            "mean_cpu_us": round(1e6 * cpu / n, 2), "cpu_seconds": round(cpu, 4),
            "mean_nodes": round(self.nodes / n), "nodes_per_cpu_second":
            round(self.nodes / cpu) if cpu > 0 else None, "wrong": len(self.wrong),
            "wrong_lines": self.wrong[:20],
        }


def time_ours(game: MnkGame, lines: list[Any], *, warm: bool, tt_bits: int = 22,
              best: bool = False) -> Times:
    """Our search on each line's position (its score only, as Pons's test protocol asks;
    with ``best`` every optimal move too, as ``gameai solve --positions`` prints), each
    from an empty table unless ``warm``; one searcher, in this process."""
    from gameai.games.mnk.columns import pons_score
    from gameai.games.mnk.search import Searcher

    searcher = Searcher(game, tt_bits=tt_bits)
    searcher.warm()
    times = Times()
    for line in lines:
        if not warm:
            searcher.clear()
        c0, t0 = time.process_time(), time.perf_counter()
        proof = searcher.prove_columns(line.columns, best=best)
        t1, c1 = time.perf_counter(), time.process_time()
        times.add(t1 - t0, c1 - c0, proof.nodes)
        if line.given is not None and pons_score(game, proof.score, proof.ply) != line.given:
            times.wrong.append(line.number)
    return times


def time_bitbully(lines: list[Any], *, warm: bool, best: bool = False) -> Times:
    """bitbully (no opening book) on the same positions: its MTD(f) score (with ``best``,
    every move's score: what it needs to name the best moves), each from an empty table
    unless ``warm`` (clearing its table is not timed, as ours is not)."""
    core_module = _bitbully()
    solver = core_module.BitBullyCore()
    boards = []
    for line in lines:
        board = core_module.BoardCore()
        board.setBoard(list(line.columns))
        boards.append(board)
    solver.mtdf(boards[0], 0)  # the first call pays for nothing that is timed
    times = Times()
    for line, board in zip(lines, boards, strict=True):
        if not warm:
            solver.resetTranspositionTable()
        solver.resetNodeCounter()
        c0, t0 = time.process_time(), time.perf_counter()
        if best:
            scores = solver.scoreMoves(board)
        else:
            score = solver.mtdf(board, 0)
        t1, c1 = time.perf_counter(), time.process_time()
        if best:
            score = max(scores)
        times.add(t1 - t0, c1 - c0, solver.getNodeCounter())
        if line.given is not None and score != line.given:
            times.wrong.append(line.number)
    return times


def _read_lines(game: MnkGame, path: str) -> list[Any]:
    from gameai.games.errors import GameError
    from gameai.games.mnk.columns import read_test_lines

    try:
        with (sys.stdin if path == "-" else open(path)) as source:
            lines = list(read_test_lines(game, source))
    except OSError as e:
        raise CannotBench(f"--positions: cannot read {path}: {e.strerror}") from e
    except (GameError, UnicodeDecodeError) as e:
        raise CannotBench(f"--positions {path}: {e}") from e
    bad = [line.number for line in lines if line.columns is None]
    if bad:
        raise CannotBench(f"--positions {path}: line {bad[0]} is not a column sequence")
    if not lines:
        raise CannotBench(f"--positions {path}: no positions")
    return lines


def _compare_row(name: str, ours: Times, theirs: Times | None) -> dict[str, Any]:
    row: dict[str, Any] = {"set": name, "ours": ours.to_json()}
    if theirs is not None:
        row["bitbully"] = theirs.to_json()
        row["cpu_ratio"] = round(sum(ours.cpu) / max(sum(theirs.cpu), 1e-9), 3)
        row["median_ratio"] = round(statistics.median(ours.wall)
                                    / max(statistics.median(theirs.wall), 1e-9), 3)
        row["nodes_ratio"] = round(ours.nodes / max(theirs.nodes, 1), 3)
    return row


def run_file_bench(args: argparse.Namespace, game: MnkGame) -> int:
    """``--positions FILE``: time the search on a test-set file (and bitbully with
    ``--against bitbully``), print the figures, exit 1 if a score differs."""
    lines = _read_lines(game, args.positions)
    load_before = os.getloadavg()
    ours = time_ours(game, lines, warm=args.warm, best=args.best)
    theirs = time_bitbully(lines, warm=args.warm, best=args.best) if args.against else None
    row = _compare_row(args.positions, ours, theirs)
    figures = {"game": game.name, "table": "warm" if args.warm else "empty",
               "asked": "best moves" if args.best else "score", "rows": [row],
               "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())]}
    _report(args, figures)
    return 1 if ours.wrong or (theirs is not None and theirs.wrong) else 0


def run_compare(args: argparse.Namespace, game: MnkGame) -> int:
    """``--compare``: ours and bitbully side by side on a drawn test set of each class
    (``--count`` positions, drawn once and cached in Pons's format), then, with
    ``--empty``, on the empty board."""
    from tqdm import tqdm

    from gameai.bench.positions import TEST_SET_CLASSES, cached_test_set
    from gameai.games.mnk.search import Searcher
    from gameai.host import cache_dir

    _bitbully()  # say at once when it is missing
    load_before = os.getloadavg()
    labeller = Searcher(game)
    rows = []
    for stage, difficulty in TEST_SET_CLASSES:
        with tqdm(total=args.count, desc=f"drawing {stage} {difficulty}", unit=" positions",
                  file=sys.stderr, disable=args.json, leave=False) as bar:

            def drawn(n: int, bar: Any = bar) -> None:
                bar.update(n - bar.n)

            path = cached_test_set(game, stage=stage, difficulty=difficulty,
                                   count=args.count, seed=args.seed, searcher=labeller,
                                   cache_dir=cache_dir(), progress=drawn)
        lines = _read_lines(game, str(path))
        ours = time_ours(game, lines, warm=args.warm, best=args.best)
        theirs = time_bitbully(lines, warm=args.warm, best=args.best)
        rows.append(_compare_row(f"{stage} {difficulty}", ours, theirs))
        if not args.json:
            print(f"  {stage} {difficulty}: CPU ratio {rows[-1]['cpu_ratio']}", file=sys.stderr)
    if args.empty:
        rows.append(_compare_empty(args, game))
    figures = {"game": game.name, "table": "warm" if args.warm else "empty",
               "asked": "best moves" if args.best else "score", "seed": args.seed,
               "rows": rows,
               "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())]}
    _report(args, figures)
    wrong = sum(r["ours"]["wrong"] + r.get("bitbully", {}).get("wrong", 0) for r in rows)
    return 1 if wrong else 0


def _compare_empty(args: argparse.Namespace, game: MnkGame) -> dict[str, Any]:
    """The empty board by both, one after the other, in this process (minutes each)."""
    from gameai.games.mnk.search import Searcher

    core_module = _bitbully()
    searcher = Searcher(game, tt_bits=EMPTY_TT_BITS)
    searcher.warm()
    ours = Times()
    if not args.json:
        print("  the empty board: ours ...", file=sys.stderr)
    c0, t0 = time.process_time(), time.perf_counter()
    score = searcher.score(game.initial())
    ours.add(time.perf_counter() - t0, time.process_time() - c0, searcher.nodes)
    solver = core_module.BitBullyCore()
    solver.resetNodeCounter()
    if not args.json:
        print(f"  ... {ours.wall[0]:,.1f} s; bitbully ...", file=sys.stderr)
    c0, t0 = time.process_time(), time.perf_counter()
    theirs_score = solver.mtdf(core_module.BoardCore(), 0)
    theirs = Times()
    theirs.add(time.perf_counter() - t0, time.process_time() - c0, solver.getNodeCounter())
    from gameai.games.mnk.columns import pons_score

    if pons_score(game, score, 0) != theirs_score:
        ours.wrong.append(0)
    return _compare_row("empty board", ours, theirs)


def _report(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(figures))
        return
    load = figures["load_average"]
    asked = figures.get("asked", "score")
    print(f"{figures['game']}: each position's {asked} from {figures['table']} table, one "
          f"process, one after the other; load average {load[0]} before, {load[3]} after")
    print(f"  {'set':<18} {'solver':<9} {'n':>5} {'mean us':>11} {'median us':>10} "
          f"{'max us':>12} {'cpu us':>11} {'nodes':>11} {'nodes/cpu s':>12} {'wrong':>5}")
    for row in figures["rows"]:
        for who in ("ours", "bitbully"):
            if who not in row:
                continue
            r = row[who]
            print(f"  {row['set'] if who == 'ours' else '':<18} {who:<9} {r['positions']:>5} "
                  f"{r['mean_us']:>11,.1f} {r['median_us']:>10,.1f} {r['max_us']:>12,.1f} "
                  f"{r['mean_cpu_us']:>11,.1f} {r['mean_nodes']:>11,} "
                  f"{r['nodes_per_cpu_second'] or 0:>12,} {r['wrong']:>5}")
        if "cpu_ratio" in row:
            print(f"  {'':<18} ours/bitbully: CPU {row['cpu_ratio']:.2f}x, median wall "
                  f"{row['median_ratio']:.2f}x, nodes {row['nodes_ratio']:.2f}x")


def run_write_sets(args: argparse.Namespace, game: MnkGame) -> int:
    """``--write-sets DIR``: a test set of ``--count`` positions of each class in Pons's
    format, labelled by our solver and, on Connect Four where bitbully is installed,
    checked against it (a disagreement is reported and exits 1)."""
    from pathlib import Path

    from tqdm import tqdm

    from gameai.bench.positions import TEST_SET_CLASSES, draw_test_set, test_set_text
    from gameai.games.mnk.search import Searcher

    core_module = None
    if game.name == "connect-four":
        try:
            core_module = _bitbully()
        except CannotBench:
            print(f"{BITBULLY_MISSING}; the sets are labelled by our solver alone",
                  file=sys.stderr)
    folder = Path(args.write_sets)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CannotBench(f"--write-sets: cannot make {folder}: {e.strerror}") from e
    labeller = Searcher(game)
    differ = 0
    for stage, difficulty in TEST_SET_CLASSES:
        with tqdm(total=args.count, desc=f"drawing {stage} {difficulty}", unit=" positions",
                  file=sys.stderr, leave=False) as bar:

            def drawn(n: int, bar: Any = bar) -> None:
                bar.update(n - bar.n)

            rows = draw_test_set(game, stage=stage, difficulty=difficulty, count=args.count,
                                 seed=args.seed, searcher=labeller, progress=drawn)
        checked = ""
        if core_module is not None:
            solver = core_module.BitBullyCore()
            for moves, score in rows:
                board = core_module.BoardCore()
                board.setBoard([int(c) - 1 for c in moves])
                if solver.mtdf(board, 0) != score:
                    differ += 1
                    print(f"{moves}: ours {score}, bitbully {solver.mtdf(board, 0)}",
                          file=sys.stderr)
            checked = ", checked against bitbully"
        path = folder / f"{game.name}-{stage}-{difficulty}.txt"
        path.write_text(test_set_text(rows))
        print(f"{path}: {len(rows)} positions ({stage} {difficulty}, seed {args.seed}"
              f"{checked})")
    if differ:
        print(f"{differ} scores differ from bitbully's", file=sys.stderr)
    return 1 if differ else 0
