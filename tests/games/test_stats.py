"""Seed 000's numbers must come out exactly."""

import pytest

from gameai.games import get_game
from gameai.games.mnk.stats import analyze


def _grid(corner: int, edge: int, centre: int) -> list[int]:
    return [corner, edge, corner, edge, centre, edge, corner, edge, corner]


def test_tictactoe_statistics_match_seed_000():
    r = analyze(get_game("tictactoe"))
    assert r["positions"] == 5478 and r["canonical_positions"] == 765
    assert r["games"] == {"total": 255168, "x_wins": 131184, "o_wins": 77904, "draws": 46080}
    assert r["non_stupid_games"] == 29600
    assert r["by_opening"]["all"] == {
        "x_wins": _grid(14652, 14232, 15648),
        "o_wins": _grid(7896, 10176, 5616),
        "draws": _grid(5184, 5184, 4608),
    }
    assert r["by_opening"]["non_stupid"] == {
        "x_wins": _grid(1080, 1240, 480),
        "o_wins": _grid(304, 608, 128),
        "draws": _grid(1668, 2144, 816),
    }
    assert r["reward_table"] == _grid(1_509_144, 1_464_864, 1_605_264)
    assert r["value"] == 0


def test_gravity_openings_are_on_the_bottom_row_only():
    r = analyze(get_game("connect-3x3-3"))
    totals = [sum(r["by_opening"]["all"][k][i] for k in ("x_wins", "o_wins", "draws"))
              for i in range(9)]
    assert totals[:6] == [0] * 6 and all(t > 0 for t in totals[6:])
    assert sum(totals) == r["games"]["total"]


@pytest.mark.slow
def test_four_in_a_row_counts():
    r = analyze(get_game("four-in-a-row"))
    assert r["positions"] == 9_722_011 and r["canonical_positions"] == 1_217_977
    assert r["value"] == 0
    g = r["games"]
    assert g["x_wins"] + g["o_wins"] + g["draws"] == g["total"]
    assert 1.4e13 < g["total"] < 1.6e13
