"""The page: one HTML file and its three static files, nothing from elsewhere."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import FileResponse

from .common import Problem

router = APIRouter(include_in_schema=False)
_STATIC = resources.files("forensic.harness.service") / "static"
_FILES = {"app.js": "text/javascript", "app.css": "text/css", "favicon.svg": "image/svg+xml"}


@router.get("/")
def index() -> FileResponse:
    with resources.as_file(_STATIC / "index.html") as p:
        return FileResponse(p, media_type="text/html", headers={"Cache-Control": "no-store"})


@router.get("/static/{name}")
def static(name: str) -> FileResponse:
    if name not in _FILES:
        raise Problem(404, "no such file")
    with resources.as_file(_STATIC / name) as p:
        return FileResponse(p, media_type=_FILES[name])
