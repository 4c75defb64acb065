"""Health, readiness, metrics and the web board."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response

from gameai.service.metrics import exposition
from gameai.service.rest.deps import RuntimeDep

WEB_DIR = Path(__file__).resolve().parent.parent / "web"

router = APIRouter()


@router.get("/healthz", tags=["health"], response_class=PlainTextResponse)
async def healthz() -> Response:
    return PlainTextResponse("ok")


@router.get("/readyz", tags=["health"],
            responses={503: {"description": "not ready (the body says why) or draining"}})
async def readyz(runtime: RuntimeDep) -> Response:
    report = runtime.registry.readiness()
    report["draining"] = runtime.draining
    ok = report["ready"] and not runtime.draining
    runtime.metrics.ready.set(1 if ok else 0)
    return JSONResponse(report, status_code=200 if ok else 503)


@router.get("/metrics", tags=["health"], response_class=PlainTextResponse)
async def metrics(runtime: RuntimeDep) -> Response:
    body, content_type = exposition(runtime.metrics)
    return Response(body, media_type=content_type)


@router.get("/", include_in_schema=False)
async def index() -> Response:
    return FileResponse(WEB_DIR / "index.html")


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> Response:
    """Browsers ask every page's host for it: the board's icon (SVG), not a 404."""
    return FileResponse(WEB_DIR / "favicon.svg", media_type="image/svg+xml")
