"""The committed gRPC code is what ``python -m gameai.service.protogen`` makes from proto/."""

from __future__ import annotations

from pathlib import Path

from gameai.service.protogen import GEN_DIR, generate, generated_files


def test_generated_code_is_current(tmp_path: Path) -> None:
    fresh = {p.relative_to(tmp_path): p.read_text() for p in generate(tmp_path)}
    committed = {p.relative_to(GEN_DIR): p.read_text() for p in generated_files(GEN_DIR)}
    assert sorted(fresh) == sorted(committed), "run: python -m gameai.service.protogen"
    stale = [str(name) for name, text in fresh.items() if committed[name] != text]
    assert stale == [], f"stale generated code {stale}: run python -m gameai.service.protogen"
    assert set(fresh) >= {Path("gameai/v1/move_pb2.py"), Path("gameai/v1/models_pb2_grpc.py")}
    assert "from gameai.service.gen.gameai.v1 import" in fresh[Path("gameai/v1/move_pb2_grpc.py")]
