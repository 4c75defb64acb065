"""Judging a model on boards past the exhaustive opponent, by the exact solvers (issue 14).

For one model and one policy (the network alone, or its search ``depth`` plies deep, as
the server plays it):

* **vs perfect as X**: the model moves first against the exact solver's play, a move drawn
  uniformly among the optimal replies (:func:`gameai.trainer.evaluation.calibrate.perfect_player`:
  the
  whole-game table where it fits, else the search within a time limit a position);
* **vs noisy solvers as O**: the model moves second against a solver that plays a
  uniformly random *non-losing* move with probability ``p`` (0.1, 0.2, 0.3) and an
  optimal move otherwise; the games where such a random move gave up the solver's forced
  win are tallied apart (``given_away``): those the model could hold to a draw, so it
  should lose none of them;
* **error rate by stage**: positions of random play at the beginning, middle and end of
  the game (thirds of the board's cells), each labelled by the solver; the model's move is
  an error when another legal move has a strictly better exact outcome (win > draw > loss).

Rates come with Wilson 95% intervals; positions or moves the solver could not settle within
its time are counted and left out, never guessed.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from gameai.games import Game, State
from gameai.games.mnk.search import SearchTimeout
from gameai.models import Model
from gameai.trainer.evaluation.book import Book
from gameai.trainer.evaluation.calibrate import (
    Z95,
    PerfectPlayer,
    Player,
    SearchPlayer,
    perfect_player,
    play_game,
    wilson,
)
from gameai.trainer.evaluation.evaluate import served_policy
from gameai.trainer.evaluation.spread import Chunk, Here, Known, Runner, chunks

NOISE = (0.1, 0.2, 0.3)
STAGES = ("beginning", "middle", "end")


def model_player(model: Model, depth: int | None) -> Player:
    """The model's best move (by its search ``depth`` deep, or the network alone)."""
    seen: dict[int, int] = {}

    def play(state: State, rng: random.Random) -> int:
        found = seen.get(state.key)
        if found is None:
            e = (model.evaluate(state) if depth is None
                 else model.search(state, depth, best_only=True))
            found = seen[state.key] = e.best.action_id
        return found
    return play


class NoisySolver:
    """Optimal play, except that with probability ``p`` a uniformly random non-losing move
    (a move whose exact outcome is not a loss; where every move loses, any move).

    With ``watch`` it also says whether its noise gave the game away: :attr:`gave_away`
    turns true at a random move that leaves no forced win (from a won position, a draw;
    on a board whose start is a draw, any random move), so the model met a position it
    could hold from then on; :attr:`unsure` where the solver ran out of time to tell.
    :meth:`begin_game` resets both. The moves and their randomness are the same watched
    or not."""

    def __init__(self, game: Game, perfect: PerfectPlayer, p: float, time_limit: float,
                 *, watch: bool = False) -> None:
        self.game, self.perfect, self.p, self.time_limit = game, perfect, p, time_limit
        self._safe: dict[int, tuple[int, ...]] = {}
        self._book = perfect.book if perfect.book is not None else Book(game)
        self.watch = watch
        self.gave_away = self.unsure = False

    def begin_game(self) -> None:
        """A new game: nothing given away yet."""
        self.gave_away = self.unsure = False

    def winning(self, state: State) -> tuple[int, ...]:
        """The moves of ``state`` that keep a forced win (proved; the book's where held).
        Raises SearchTimeout where the solver runs out of time."""
        return winning_moves(self._book, state, self.time_limit)

    def safe(self, state: State) -> tuple[int, ...]:
        found = self._safe.get(state.key)
        if found is None:
            try:
                found = self._book.answer("non_losing", state, lambda: self.game.
                                          non_losing_actions(state, time_limit=self.time_limit))
                found = found or tuple(state.legal_actions())
            except SearchTimeout:
                found = self.perfect.optimal(state)
            self._safe[state.key] = found
        return found

    @property
    def answers(self) -> dict[int, tuple[int, ...]]:
        """The safe moves found so far by position key."""
        return self._safe

    def remember(self, safe: dict[int, tuple[int, ...]]) -> None:
        """Keep safe moves found elsewhere (a Ray task's); known positions keep theirs."""
        for key, moves in safe.items():
            self._safe.setdefault(key, tuple(moves))

    def __call__(self, state: State, rng: random.Random) -> int:
        if rng.random() < self.p:
            options = self.safe(state)
            move = options[int(rng.random() * len(options))]
            if self.watch and not self.gave_away:
                try:
                    self.gave_away = move not in self.winning(state)
                except SearchTimeout:
                    self.unsure = True
            return move
        return self.perfect(state, rng)


def winning_moves(book: Book, state: State, time_limit: float) -> tuple[int, ...]:
    """The moves of ``state`` whose exact outcome is a win (``book``'s answer where it
    holds one, else proved and kept there). Raises SearchTimeout past ``time_limit``."""
    return book.answer("winning", state, lambda: book.game.forced_win_actions(
        state, time_limit=time_limit))


def best_outcome_moves(book: Book, state: State, time_limit: float) -> tuple[int, ...]:
    """The moves of ``state`` with its best exact outcome: the winning ones where one
    wins, else the drawing ones where one draws, else every move. Raises SearchTimeout
    past ``time_limit``."""
    wins = winning_moves(book, state, time_limit)
    if wins:
        return wins
    holds = book.answer("non_losing", state, lambda: book.game.non_losing_actions(
        state, time_limit=time_limit))
    return holds or tuple(state.legal_actions())


def first_mistakes(players: dict[str, Player], lines: list[list[tuple[State, int]]],
                   book: Book, time_limit: float, rng: random.Random,
                   side: str = "X") -> dict[str, Any]:
    """Where a policy's games as ``side`` went wrong: in each of ``lines`` (the positions
    it moved from and its moves, in a game it did not win as X, or lost as O) the first
    move whose exact outcome is worse than the position's (a draw or a loss where a win
    was there, a loss where a draw was). Each such position once, with the games that met
    it, its ply, its best moves, and whether each of ``players`` (the other depths) plays
    one of them: which depth errs where the others do not. A game held to its best
    outcome throughout (a drawn board drawn) has none; so has a game as O that no
    opponent's mistake made drawable (every move of a lost position is as good as any)."""
    first_ply = "XO".index(side)
    found: dict[int, dict[str, Any]] = {}
    unsure = 0
    for line in lines:
        for i, (state, move) in enumerate(line):  # one side's: plies 0, 2... or 1, 3...
            try:
                best = best_outcome_moves(book, state, time_limit)
            except SearchTimeout:
                unsure += 1
                break
            if move in best:
                continue
            entry = found.get(state.key)
            if entry is None:
                others = {name: player(state, rng) for name, player in players.items()}
                entry = found[state.key] = {
                    "position": str(state), "ply": 2 * i + first_ply, "played": move,
                    "best": list(best), "games": 0,
                    "others": {name: {"move": m, "right": m in best}
                               for name, m in others.items()}}
            entry["games"] += 1
            break
    positions = sorted(found.values(), key=lambda e: (-e["games"], e["ply"]))
    games = sum(e["games"] for e in positions)
    by_ply: dict[int, int] = {}
    for e in positions:
        by_ply[e["ply"]] = by_ply.get(e["ply"], 0) + e["games"]
    return {"games": games, "unsure": unsure, "by_ply": dict(sorted(by_ply.items())),
            "others_right": {name: sum(e["games"] for e in positions
                                       if e["others"][name]["right"]) for name in players},
            "positions": positions}


class _Lines:
    """``player``, recording each game's positions it moved from and its moves; a game's
    line is kept when ``keep`` says so of its winner at its end (:meth:`ended`)."""

    def __init__(self, player: Player, keep: Callable[[str | None], bool]) -> None:
        self.player, self.keep = player, keep
        self.line: list[tuple[State, int]] = []
        self.kept: list[list[tuple[State, int]]] = []

    def __call__(self, state: State, rng: random.Random) -> int:
        move = self.player(state, rng)
        self.line.append((state, move))
        return move

    def ended(self, winner: str | None) -> None:
        if self.keep(winner):
            self.kept.append(self.line)
        self.line = []


def _tally(results: list[str | None], side: str) -> dict[str, Any]:
    n = len(results)
    won = sum(r == side for r in results)
    lost = sum(r is not None and r != side for r in results)
    drawn = n - won - lost
    out: dict[str, Any] = {"games": n, "win": won, "draw": drawn, "loss": lost}
    for name, k in (("win", won), ("draw", drawn), ("loss", lost)):
        low, high = wilson(k, n)
        out[f"{name}_rate"] = {"value": k / n if n else 0.0, "low": low, "high": high}
    return out


def games_against(game: Game, me: Player, opponent: Player, side: str, games: int,
                  seed: int, progress: Callable[[], None] | None = None) -> dict[str, Any]:
    return _tally(_results(game, me, opponent, side, games, seed, progress), side)


def _results(game: Game, me: Player, opponent: Player, side: str, games: int, seed: int,
             progress: Callable[[], None] | None = None,
             after: Callable[[str | None], None] | None = None) -> list[str | None]:
    """The winners of ``games`` games of ``me`` as ``side``; ``after`` hears each one's
    winner as it ends (a :class:`NoisySolver` opponent has begun a new game by then)."""
    rng = random.Random(seed)
    results = []
    for _ in range(games):
        x, o = (me, opponent) if side == "X" else (opponent, me)
        if isinstance(opponent, NoisySolver):
            opponent.begin_game()
        results.append(play_game(game, x, o, rng))
        if after is not None:
            after(results[-1])
        if progress is not None:
            progress()
    return results


def _match(game: Game, me: Player, opponent: Player, side: str, games: int, seed: int,
           perfect: PerfectPlayer, progress: Callable[[], None],
           each: Callable[[str | None], None] | None = None) -> dict[str, Any]:
    """:func:`games_against`, with how many of the opponent's moves the solver proved, and
    against a watching :class:`NoisySolver` the games its noise gave away, tallied apart
    (``given_away``: the model's results in them; the target is never to lose one) with
    the games the solver could not tell (``given_away_unsure``)."""
    before = (perfect.exact_moves, perfect.guessed_moves)
    given: list[str | None] = []
    unsure = [0]

    def after(winner: str | None) -> None:
        if each is not None:
            each(winner)
        if isinstance(opponent, NoisySolver) and opponent.watch:
            if opponent.gave_away:
                given.append(winner)
            unsure[0] += opponent.unsure and not opponent.gave_away

    out = _tally(_results(game, me, opponent, side, games, seed, progress, after), side)
    if isinstance(opponent, NoisySolver) and opponent.watch:
        out["given_away"] = _tally(given, side)
        out["given_away_unsure"] = unsure[0]
    out["unproved_moves"] = perfect.guessed_moves - before[1]
    out["opponent_moves"] = perfect.exact_moves - before[0] + out["unproved_moves"]
    return out


def stage_positions(game: Game, per_stage: int, seed: int) -> dict[str, list[State]]:
    """``per_stage`` distinct unfinished positions of random play in each third."""
    rng = random.Random(seed)
    bounds = [0, game.cells // 3, 2 * game.cells // 3, game.cells - 1]
    out: dict[str, list[State]] = {}
    for i, stage in enumerate(STAGES):
        found: dict[int, State] = {}
        tries = 0
        while len(found) < per_stage and tries < per_stage * 50:
            tries += 1
            target = rng.randrange(bounds[i], bounds[i + 1])
            state = game.initial()
            for _ in range(target):
                actions = state.legal_actions()
                state = state.play(actions[int(rng.random() * len(actions))])
                if state.is_over():
                    break
            if not state.is_over():
                found.setdefault(state.key, state)
        out[stage] = list(found.values())
    return out


def error_rates(game: Game, policies: dict[str, Player], positions: dict[str, list[State]],
                time_limit: float, progress: Callable[[], None] | None = None,
                runner: Runner | None = None) -> dict[str, Any]:
    """Per policy and stage: errors among the positions the solver settled; the solver's
    labels made by ``runner`` (this process by default, or Ray tasks on a cluster)."""
    rng = random.Random(0)
    counts = {name: {s: [0, 0] for s in positions} for name in policies}
    unsettled = dict.fromkeys(positions, 0)
    for stage, states in positions.items():
        labels = (runner or Here()).label(game, states, time_limit)
        for state, rank in zip(states, labels, strict=True):
            if progress is not None:
                progress()
            if rank is None:
                unsettled[stage] += 1
                continue
            top = max(rank.values())
            for name, player in policies.items():
                counts[name][stage][1] += 1
                counts[name][stage][0] += rank[player(state, rng)] < top
    report: dict[str, Any] = {"unsettled_positions": unsettled, "policies": {}}
    for name, stages in counts.items():
        report["policies"][name] = {}
        for stage, (errors, n) in stages.items():
            low, high = wilson(errors, n)
            report["policies"][name][stage] = {"positions": n, "errors": errors,
                                               "rate": errors / n if n else 0.0,
                                               "low": low, "high": high}
    return report


def judge(model: Model, *, depths: list[int | None], games: int = 500,
          noisy_games: int = 200, per_stage: int = 200, seed: int = 0,
          time_limit: float = 2.0, book: Book | None = None, show_progress: bool = False,
          progress: Callable[[str], None] = print, runner: Runner | None = None,
          sides: str = "XO", mistakes: bool = False,
          others: Mapping[str, Player] | None = None) -> dict[str, Any]:
    """Every figure of the module docstring for each policy (``None``: the network alone),
    and for each of ``others``, policies judged beside them by name (the served level
    ``best``, say: :func:`gameai.bench.ntuple.best_level_player`).

    ``book`` keeps the searched opponents' proved answers (on disk, when it has a path), so
    a later judgement, of this model or another, does not pay for them again;
    ``show_progress`` draws a bar of the games played with their rate and ETA; ``runner``
    labels the error rates' positions (:mod:`gameai.trainer.evaluation.spread`);
    ``sides`` which sides play perfect play (``X``, ``O`` or ``XO``; the noisy solvers
    are met as O, so only with ``O``); ``mistakes`` adds, for each policy's games as X
    that it did not win and its games as O that a noisy solver gave away and it lost
    (``given_away``'s ``first_mistakes``), the first move that made its outcome worse
    (:func:`first_mistakes`).
    Raises ValueError for other sides."""
    from gameai.trainer.progress import Progress

    if sides not in ("X", "O", "XO"):
        raise ValueError(f"sides: X, O or XO, got {sides!r}")
    game = model.game
    started = time.perf_counter()
    perfect = perfect_player(game, time_limit=time_limit, book=book)
    report: dict[str, Any] = {"game": game.name, "games": games, "noisy_games": noisy_games,
                              "seed": seed, "time_limit": time_limit,
                              "load_average_before": os.getloadavg(), "policies": {}}
    players = {("network" if d is None else f"depth {d}"): model_player(model, d)
               for d in depths}
    players.update(others or {})
    as_o = "O" in sides
    total = len(players) * (len(sides) * games + (len(NOISE) * noisy_games if as_o else 0))
    bar = Progress(total=total, desc=f"judging {game.name}", enabled=show_progress)
    for name, me in players.items():
        def step(label: str) -> Callable[[], None]:
            return lambda: bar.advance(1, note=f"{name} {label}")  # noqa: B023

        figures: dict[str, Any] = {}
        said = []
        others_here = {n: p for n, p in players.items() if n != name}

        def went_wrong(side: str, lines: _Lines) -> dict[str, Any]:
            book_here = perfect.book if perfect.book is not None else Book(game)
            return first_mistakes(others_here, lines.kept, book_here,  # noqa: B023
                                  time_limit, random.Random(seed), side)

        if "X" in sides:
            not_won = _Lines(me, lambda winner: winner != "X")
            x = figures["vs_perfect_as_x"] = _match(
                game, not_won if mistakes else me, perfect, "X", games, seed, perfect,
                step("vs perfect as X"), not_won.ended if mistakes else None)
            said.append(f"vs perfect as X won/drew/lost {x['win']}/{x['draw']}/{x['loss']}")
            if mistakes:
                found = x["first_mistakes"] = went_wrong("X", not_won)
                said.append(f"first went wrong at plies {found['by_ply']}")
        if as_o:
            o = figures["vs_perfect_as_o"] = _match(game, me, perfect, "O", games, seed + 1,
                                                    perfect, step("vs perfect as O"))
            for p in NOISE:
                noisy = NoisySolver(game, perfect, p, time_limit, watch=True)
                # with mistakes: the given-away games lost, where they went wrong
                lost = _Lines(me, lambda winner: winner == "X" and noisy.gave_away)  # noqa: B023
                f = figures[f"vs_noisy_{p}_as_o"] = _match(
                    game, lost if mistakes else me, noisy, "O", noisy_games, seed + 2,
                    perfect, step(f"vs noisy {p}"), lost.ended if mistakes else None)
                if mistakes:
                    f["given_away"]["first_mistakes"] = went_wrong("O", lost)
            noisy_figures = [(p, figures[f"vs_noisy_{p}_as_o"]) for p in NOISE]
            said.append(f"as O {o['win']}/{o['draw']}/{o['loss']}; vs noisy as O won " +
                        ", ".join(f"p={p}: {f['win']}" for p, f in noisy_figures) +
                        "; lost of the games the noise gave away " +
                        ", ".join(f"p={p}: {f['given_away']['loss']} of "
                                  f"{f['given_away']['games']}" for p, f in noisy_figures))
            if mistakes:
                said.append("those first went wrong at plies " + ", ".join(
                    f"p={p}: {f['given_away']['first_mistakes']['by_ply']}"
                    for p, f in noisy_figures))
        report["policies"][name] = figures
        progress(f"{name}: " + ", ".join(said))
    bar.close()
    report["errors"] = None  # per_stage 0: none (Connect Four's are its benchmark classes)
    if per_stage:
        positions = stage_positions(game, per_stage, seed)
        report["errors"] = error_rates(game, players, positions, time_limit, runner=runner)
        for name, stages in report["errors"]["policies"].items():
            progress(f"{name}: error rate " + ", ".join(
                f"{s} {100 * v['rate']:.1f}% of {v['positions']}" for s, v in stages.items()))
    report["perfect_opponent"] = {"exact_moves": perfect.exact_moves,
                                  "guessed_moves": perfect.guessed_moves}
    if perfect.book is not None:
        report["book"] = {"path": str(perfect.book.path) if perfect.book.path else None,
                          "positions": len(perfect.book), "hits": perfect.book.hits,
                          "solved": perfect.book.misses}
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["load_average_after"] = os.getloadavg()
    return report


def play_line(game: Game, x: Player, o: Player, rng: random.Random
               ) -> tuple[str | None, tuple[int, ...]]:
    """One game from the start: the winner (``None``: a draw) and its moves."""
    state = game.initial()
    moves = []
    while not state.is_over():
        action = (x if state.to_move == "X" else o)(state, rng)
        moves.append(action)
        state = state.play(action)
    return state.winner(), tuple(moves)


# --- the gates' judge (issue 14, point 5) -------------------------------------------------

GATE_NOISE = NOISE  # the noisy solvers the gate plays on boards past the tables


class GateJudge:
    """The solver-based measures the gates compare
    (:func:`gameai.trainer.worker.gates.check_judged`), of
    the policy a server would play (:func:`served_policy`), in the order they rank:

    * boards whose whole-game solver table fits (four-in-a-row and smaller): ``lines_lost``,
      the exhaustive opponent's winning lines against the served policy as X plus as O
      (exact), then ``optimal_move_rate`` of the network over every reachable position
      (exact; taken from the evaluator's report: the served policy's own rate costs 70 s
      on four-in-a-row, four times the rest of the judgement);
    * larger boards (``mnk-4x5-4``, Connect Four): ``vs_perfect_as_x``, ``games`` games as
      first player against the perfect opponent (uniform among optimal replies), then
      ``vs_noisy_P_as_o`` for P in 0.1, 0.2, 0.3: as second player against a solver that
      plays a random non-losing move with probability P. Each is a mean score (win 1,
      draw 1/2, loss 0) with the variance of that mean, so the gate can tell when two models
      are indistinguishable. Games that replay the same line are not independent (a
      deterministic model against fixed unproved answers), so the variance is counted over
      the distinct lines (``distinct_games``), never over more samples than were seen.

    The opponents live as long as the judge, so every model this judge sees (candidates and
    production alike) meets the same answers to the same positions with the same seeds.
    Past the tables the perfect opponent is the game's search, ``time_limit`` seconds a
    position: a position it cannot prove in time gets the move with the best proved bound
    (counted in ``unproved_moves``), and keeps that answer for every later model, so both
    sides of a comparison face the same opponent, perfect only as far as was proved.
    """

    def __init__(self, game: Game, *, games: int = 100, time_limit: float = 2.0,
                 seed: int = 0, matches: bool | None = None, book: Book | None = None,
                 runner: Runner | None = None, opponents: Opponents | None = None) -> None:
        self.game, self.games, self.time_limit, self.seed = game, games, time_limit, seed
        self.matches = matches  # None: by the board; True: the games even where tables fit
        self.runner: Runner = runner or Here()  # where the matches' chunks are played
        self.opponents = opponents or Opponents(game, time_limit, book)

    @property
    def book(self) -> Book | None:
        """Where the searched opponent keeps its proved answers."""
        return self.opponents.book

    def measures(self, model: Model, report: dict[str, Any],
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """The judged measures of ``model``, whose evaluator's report is ``report``;
        ``progress`` is told, as the matches go, what is being played (for people)."""
        from gameai.trainer.evaluation.evaluate import line_outcomes

        started = time.perf_counter()
        policy, name = served_policy(model)
        served = report.get("served") or {}
        out: dict[str, Any] = {"policy": name, "measures": []}
        omitted = report.get("omitted") or {}
        exhaustive = "optimal_move_rate" not in omitted and "losses_as_x" not in omitted \
            and "losses_as_o" not in omitted
        if exhaustive and not self.matches:
            # the evaluator's figures of the served policy where it has them (n-tuple)
            lost = {side: served[f"losses_as_{side.lower()}"]
                    if served.get("policy") == name and f"losses_as_{side.lower()}" in served
                    else line_outcomes(policy, side=side)[0] for side in ("X", "O")}
            out["measures"].append({"name": "lines_lost", "kind": "lines",
                                    "value": lost["X"] + lost["O"], "as_x": lost["X"],
                                    "as_o": lost["O"]})
            out["measures"].append({"name": "optimal_move_rate", "kind": "rate",
                                    "value": report["optimal_move_rate"],
                                    "positions": report.get("optimal_move_positions"),
                                    "policy": "network"})
        else:
            out["measures"] = self._matches(model, policy, progress, out)
        out["seconds"] = round(time.perf_counter() - started, 2)
        return out

    def _matches(self, model: Model, policy: Model, progress: Callable[[str], None] | None,
                 out: dict[str, Any]) -> list[dict[str, Any]]:
        """The served policy's matches, their chunks played by :attr:`runner`."""
        from gameai.trainer.evaluation.calibrate import Tally

        labels = [("vs_perfect_as_x", "X", self.seed, None)] + [
            (f"vs_noisy_{p}_as_o", "O", self.seed + 2, p) for p in GATE_NOISE]
        pieces = [c for label, side, seed, noise in labels
                  for c in chunks(label, side, seed, self.games, noise)]
        total, finished = len(labels) * self.games, [0]

        def done(chunk: Chunk, games: int) -> None:
            finished[0] += games
            if progress is not None:
                progress(f"judging: game {finished[0]} of {total} ({len(labels)} matches; "
                         f"{chunk.label}, {self.runner.name})")

        results = self.runner.play(self.opponents, model.to_bytes, model_player(policy, None),
                                   pieces, done)
        measures = []
        for label, _side, _seed, _noise in labels:
            tally = Tally()
            lines: set[tuple[int, ...]] = set()
            for played in (p for p in results if p.chunk.label == label):
                lines.update(played.lines)
                for winner in played.winners:
                    if winner is None:
                        tally.draws += 1
                    elif winner == played.chunk.side:
                        tally.wins += 1
                    else:
                        tally.losses += 1
            # Games that repeat a line are not independent draws (a deterministic model
            # against an opponent whose unproved answers are fixed replays its lines),
            # so the score's variance counts distinct lines only: a wider, honest band.
            variance = tally.score_variance * tally.games / len(lines)
            half = Z95 * math.sqrt(variance)
            score = tally.score
            measures.append({
                "name": label, "kind": "score", **tally.to_json(),
                "score": {"value": score, "low": max(score - half, 0.0),
                          "high": min(score + half, 1.0)},
                "distinct_games": len(lines), "variance": variance})
        out["opponent_moves"] = sum(p.exact_moves + p.guessed_moves for p in results)
        out["unproved_moves"] = sum(p.guessed_moves for p in results)
        out["time_limit"] = self.time_limit
        out["runner"] = self.runner.name
        return measures


class Opponents:
    """The judge's opponents, kept as long as the judge so that every model meets the same
    answers: the perfect player (table or search, its proved answers in ``book``) and the
    noisy solvers built on it. :meth:`known` and :meth:`learn` carry what they know to and
    from a Ray task (:mod:`gameai.trainer.evaluation.spread`)."""

    def __init__(self, game: Game, time_limit: float, book: Book | None = None,
                 perfect: PerfectPlayer | None = None) -> None:
        self.game, self.time_limit, self.book = game, time_limit, book
        self._perfect = perfect  # None: the table's where it fits, else the search's
        self._noisy: dict[float, NoisySolver] = {}

    @property
    def perfect(self) -> PerfectPlayer:
        if self._perfect is None:
            self._perfect = perfect_player(self.game, time_limit=self.time_limit,
                                           book=self.book)
        return self._perfect

    def opponent(self, noise: float | None) -> Player:
        """The perfect player (``noise`` None), or the solver noisy with that probability."""
        if noise is None:
            return self.perfect
        found = self._noisy.get(noise)
        if found is None:
            found = self._noisy[noise] = NoisySolver(self.game, self.perfect, noise,
                                                     self.time_limit)
        return found

    def counts(self) -> tuple[int, int]:
        """The perfect player's proved and guessed moves so far."""
        return self.perfect.exact_moves, self.perfect.guessed_moves

    def known(self) -> Known:
        """What the opponents know, as plain data (nothing for a table's perfect player,
        which any process builds alike)."""
        perfect = self.perfect
        if not isinstance(perfect, SearchPlayer):
            return Known()
        guessed = perfect.guessed_keys
        optimal = {key: moves for (ask, key), moves in perfect.book.items()
                   if ask == "optimal"}
        optimal.update({k: v for k, v in perfect.answers.items() if k not in guessed})
        safe: dict[int, tuple[int, ...]] = {}
        for noisy in self._noisy.values():
            safe.update(noisy.answers)
        return Known(searched=True, optimal=optimal,
                     non_losing={key: moves for (ask, key), moves in perfect.book.items()
                                 if ask == "non_losing"},
                     guessed={k: perfect.answers[k] for k in guessed}, safe=safe)

    def learn(self, known: Known) -> None:
        """Add what a task's opponents learned: proved answers to the book (written down),
        guessed answers and safe moves to the players' memories."""
        perfect = self.perfect
        if not isinstance(perfect, SearchPlayer):
            return
        for ask, answers in (("optimal", known.optimal), ("non_losing", known.non_losing)):
            for key, moves in answers.items():
                perfect.book.add(ask, key, moves)
        perfect.remember(known.guessed)
        for noise in NOISE:
            self.opponent(noise)
        for noisy in self._noisy.values():
            noisy.remember(known.safe)
