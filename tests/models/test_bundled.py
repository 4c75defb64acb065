"""Bundled starting models: read only as the manifest names them (size and sha256)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gameai.games import get_game
from gameai.models import CorruptModel, load_model
from gameai.models.bundled import MAX_BYTES, bundled, manifest
from gameai.models.oracle import solver_model


def shelf(tmp_path: Path, data: bytes, sha256: str | None = None) -> Path:
    (tmp_path / "tictactoe.gmodel").write_bytes(data)
    (tmp_path / "bundled.json").write_text(json.dumps({"tictactoe": {
        "file": "tictactoe.gmodel", "sha256": sha256 or hashlib.sha256(data).hexdigest(),
        "command": "gameai models export ...", "judged": "perfect"}}))
    return tmp_path


def test_a_bundled_model_is_read_as_its_manifest_names_it(tmp_path: Path) -> None:
    data = solver_model(get_game("tictactoe")).to_bytes()
    entry = bundled("tictactoe", shelf(tmp_path, data))
    assert entry is not None and entry.judged == "perfect"
    assert load_model(entry.read(tmp_path)).game.name == "tictactoe"
    assert bundled("connect-four", tmp_path) is None


def test_a_file_that_is_not_the_manifests_is_refused(tmp_path: Path) -> None:
    data = solver_model(get_game("tictactoe")).to_bytes()
    entry = bundled("tictactoe", shelf(tmp_path, data, sha256="0" * 64))
    assert entry is not None
    with pytest.raises(CorruptModel, match="not the manifest's 000000000000"):
        entry.read(tmp_path)
    (tmp_path / "tictactoe.gmodel").unlink()
    with pytest.raises(CorruptModel, match="cannot be read"):
        entry.read(tmp_path)


def test_a_bundled_model_is_at_most_ten_megabytes(tmp_path: Path) -> None:
    big = b"x" * (MAX_BYTES + 1)
    entry = bundled("tictactoe", shelf(tmp_path, big))
    assert entry is not None
    with pytest.raises(CorruptModel, match="at most 10,485,760 are bundled"):
        entry.read(tmp_path)


def test_the_shipped_manifest_names_files_that_match() -> None:
    """Every model the package ships is within the size limit and is the manifest's."""
    for entry in manifest().values():
        assert load_model(entry.read()).game.name == entry.game
        assert entry.command.startswith("SOURCE_DATE_EPOCH=")
