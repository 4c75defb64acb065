"""The admin routes (mounted only when the server has an admin token): aliases, pins and
the canary, each guarded by :func:`gameai.service.rest.deps.require_admin`."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from gameai.service import core
from gameai.service.rest.bodies import who
from gameai.service.rest.deps import RuntimeDep, require_admin
from gameai.service.rest.render import answer
from gameai.service.rest.schema import ADMIN_ERRORS, AliasRequest, CanaryRequest, Game

router = APIRouter(tags=["admin"], dependencies=[Depends(require_admin)],
                   responses=ADMIN_ERRORS)


@router.put("/v1/games/{game}/aliases/{alias}")
async def set_alias(game: Game, alias: str, body: AliasRequest, request: Request,
                    runtime: RuntimeDep) -> Response:
    request.scope["gameai"] = ("SetAlias", game, None)
    change = await asyncio.to_thread(core.set_alias, runtime.registry, game=game,
                                     alias=alias, version=body.version, by=who(request),
                                     pin=body.pin)
    pinned = {"pinned": True} if body.pin and alias == "production" else {}
    return answer(request, "SetAlias", change.game, {**change.to_json(), **pinned},
                  change.to_version)


@router.put("/v1/games/{game}/pin")
async def pin(game: Game, request: Request, runtime: RuntimeDep) -> Response:
    """Pin production where it is: the trainer's automatic promotion holds off."""
    request.scope["gameai"] = ("Pin", game, None)
    held = await asyncio.to_thread(core.pin, runtime.registry, game=game, by=who(request))
    return answer(request, "Pin", game, {"game": game, "pin": held.to_json()}, held.version)


@router.delete("/v1/games/{game}/pin")
async def release(game: Game, request: Request, runtime: RuntimeDep) -> Response:
    """Release the pin on production: the trainer may promote a better version again."""
    request.scope["gameai"] = ("Release", game, None)
    released = await asyncio.to_thread(core.release, runtime.registry, game=game,
                                       by=who(request))
    return answer(request, "Release", game, {
        "game": game, "released": released.to_json() if released else None}, None)


@router.put("/v1/games/{game}/canary")
async def set_canary(game: Game, body: CanaryRequest, request: Request,
                     runtime: RuntimeDep) -> Response:
    request.scope["gameai"] = ("SetCanary", game, None)
    await asyncio.to_thread(core.set_canary, runtime.registry, game=game,
                            version=body.version, weight=body.weight, by=who(request))
    return answer(request, "SetCanary", game, {"game": game, "version": body.version,
                                                 "weight": body.weight}, body.version)
