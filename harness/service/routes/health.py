"""Liveness (the database answers) and the Prometheus metrics."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Response

from .common import Svc

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz(svc: Svc) -> dict[str, Any]:
    svc.store.counts()  # the database answers
    return {"ok": True, "time": time.time()}


@router.get("/metrics")
def metrics(svc: Svc) -> Response:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return Response(generate_latest(svc.metrics.registry), media_type=CONTENT_TYPE_LATEST)
