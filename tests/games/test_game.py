import pytest

from gameai.games import UnknownGame, get_game, known_games


@pytest.mark.parametrize(
    ("name", "rows", "cols", "k", "gravity"),
    [
        ("tictactoe", 3, 3, 3, False),
        ("four-in-a-row", 4, 4, 4, False),
        ("mnk-4x5-4", 4, 5, 4, False),
        ("connect-four", 6, 7, 4, True),
        ("mnk-7x9-5", 7, 9, 5, False),
        ("connect-5x6-4", 5, 6, 4, True),
    ],
)
def test_named_and_patterned_games_parse(name, rows, cols, k, gravity):
    game = get_game(name)
    assert (game.rows, game.cols, game.k, game.gravity) == (rows, cols, k, gravity)


def test_names_are_normalised_to_one_game():
    assert get_game("mnk-3x3-3") is get_game("tictactoe")
    assert get_game("connect-6x7-4").name == "connect-four"
    assert get_game(" TicTacToe ") is get_game("tictactoe")


@pytest.mark.parametrize("name", ["no-such-game", "mnk-3x3", "mnk-0x3-3", "mnk-9x9-5",
                                  "mnk-3x3-4", "connect-3x3-0", ""])
def test_unknown_games_name_the_known_ones_or_the_limit(name):
    with pytest.raises(UnknownGame) as err:
        get_game(name)
    message = str(err.value)
    assert ("mnk-RxC-K" in message or "k must be" in message or "at most 64" in message
            or "at least one row" in message)


@pytest.mark.parametrize("name", ["mnk-9x9-5", "mnk-100x100-5", "connect-9x8-4",
                                  "mnk-12345678x1-3"])
def test_an_oversized_game_is_refused_with_one_message_naming_the_limit(name):
    with pytest.raises(UnknownGame) as err:
        get_game(name)
    assert f"game {name!r}: a board has at most 64 cells" in str(err.value)
    assert "unknown game" not in str(err.value)


def test_unknown_game_message_lists_known_games():
    with pytest.raises(UnknownGame) as err:
        get_game("chess")
    for name in known_games():
        assert name in str(err.value)


@pytest.mark.parametrize(("name", "lines"), [("tictactoe", 8), ("four-in-a-row", 10),
                                             ("mnk-4x5-4", 17), ("connect-four", 69)])
def test_line_counts(name, lines):
    assert len(get_game(name).lines) == lines


@pytest.mark.parametrize(("name", "count"), [("tictactoe", 8), ("mnk-4x5-4", 4),
                                             ("connect-four", 2)])
def test_symmetry_counts(name, count):
    game = get_game(name)
    assert len(game.symmetries) == count
    assert game.symmetries[0] == tuple(range(game.cells))
    for perm in game.symmetries:
        assert sorted(perm) == list(range(game.cells))
        moved = {sum(1 << perm[i] for i in range(game.cells) if line >> i & 1)
                 for line in game.lines}
        assert moved == set(game.lines), "a symmetry must map lines to lines"
