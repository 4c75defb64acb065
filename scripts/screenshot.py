"""Redraw the README's picture of the web board (docs/img/board.png), as a user sees it.

    .venv/bin/python scripts/screenshot.py [--out docs/img/board.png]

Serves tic-tac-toe's exact model from a private Redis with a real `gameai serve`, then in
headless Chromium (Debian's chromium, driven by playwright): X opens in the corner, the
model answers, X takes the opposite corner, the model answers, and the hint is asked for.
When the model answers with the top edge this is seed 000's fourth question ("XO-|-O-|--X":
only the bottom middle saves X), the position the README's caption describes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from gameai.games import get_game
from gameai.models.oracle import solver_model
from gameai.store import ModelStore, RedisServer
from gameai.store.embedded import free_port

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "board.png")
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as tmp, \
            RedisServer(Path(tmp) / "redis", tcp=True, persist=False) as redis:
        with ModelStore.from_url(redis.url) as store:
            record = store.publish(solver_model(get_game("tictactoe")).to_bytes(), by="docs")
            store.set_alias(game="tictactoe", alias="production", version=record.version,
                            by="docs")
        http, grpc = free_port(), free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "gameai", "serve", "--store", redis.url, "--http-port",
             str(http), "--grpc-port", str(grpc), "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{http}"
            _wait_ready(f"{base}/readyz")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1000, "height": 900})
                page.goto(f"{base}/")
                status = page.locator("#status")
                expect(status).to_have_text("Your move (X)", timeout=20_000)
                for cell, o_pieces in ((0, 1), (8, 2)):
                    page.locator(f'#board .cell[data-index="{cell}"]').click()
                    expect(page.locator("#board .cell.O")).to_have_count(o_pieces,
                                                                         timeout=20_000)
                    expect(status).to_have_text("Your move (X)", timeout=20_000)
                page.click("#hint")
                expect(page.locator("#hints")).to_be_visible(timeout=20_000)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.out), full_page=True)
                browser.close()
        finally:
            server.terminate()
            server.wait(30)
    print(f"wrote {args.out}")
    return 0


def _wait_ready(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server was not ready within {seconds:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
