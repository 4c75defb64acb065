"""The catalog routes: the games served and the model versions of each (read-only; the
store calls run in a thread, so a slow store never holds up the moves)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from gameai.service import core
from gameai.service.rest.deps import RuntimeDep
from gameai.service.rest.render import answer
from gameai.service.rest.schema import MODEL_ERRORS, Game

router = APIRouter(tags=["models"])


@router.get("/v1/games")
async def list_games(request: Request, runtime: RuntimeDep) -> Response:
    games = [{"name": s.game.name, "rows": s.game.rows, "cols": s.game.cols,
              "k": s.game.k, "gravity": s.game.gravity, "aliases": s.aliases,
              "canary_weight": s.canary_weight, "shadow_share": s.shadow_share,
              "loaded_versions": s.loaded_versions,
              "ready": s.ready, "pin": s.pin.to_json() if s.pin else None,
              "start": str(s.game.initial()), **s.game.rules()}
             for s in core.list_games(runtime.registry)]
    return answer(request, "ListGames", "", {"games": games}, None)


@router.get("/v1/games/{game}/models", responses=MODEL_ERRORS)
async def list_models(game: Game, request: Request, runtime: RuntimeDep) -> Response:
    request.scope["gameai"] = ("ListModels", game, None)
    listing = await asyncio.to_thread(core.list_models, runtime.registry, game=game)
    return answer(request, "ListModels", listing.game, {
        "game": listing.game, "aliases": listing.aliases,
        "canary_weight": listing.canary_weight,
        "pin": listing.pin.to_json() if listing.pin else None,
        "shadow": listing.shadow_json(),
        "versions": [v.to_json() for v in listing.versions]}, None)


@router.get("/v1/games/{game}/models/{version}", responses=MODEL_ERRORS)
async def get_model(game: Game, version: Annotated[str, Path(examples=["production", "1"])],
                    request: Request, runtime: RuntimeDep) -> Response:
    request.scope["gameai"] = ("GetModel", game, None)
    summary = await asyncio.to_thread(core.get_model, runtime.registry, game=game,
                                      version=version)
    return answer(request, "GetModel", summary.game, summary.to_json(), summary.version)
