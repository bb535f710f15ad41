"""``/readyz`` (database answers, schema at head) and ``/metrics`` (Prometheus text)."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import Engine, text

from service import migrate

log = logging.getLogger(__name__)

router = APIRouter(tags=["health"])


class ReadinessCheck:
    """Runs the database check in a thread of its own and waits at most ``timeout``: a
    database that does not answer (a dropped packet, not a refused connection) must not
    hang the probe. While one check is stuck, later probes answer 503 at once rather than
    queue up behind it."""

    def __init__(self, engine: Engine, timeout: float) -> None:
        self.engine = engine
        self.timeout = timeout
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="readyz")
        self._lock = threading.Lock()
        self._running: Future[bool] | None = None

    def _check(self) -> bool:
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        return migrate.is_at_head(self.engine)

    def __call__(self) -> str | None:
        """None when ready, else the reason."""
        with self._lock:
            if self._running is not None and not self._running.done():
                return "the previous database check has not returned yet"
            self._running = future = self._pool.submit(self._check)
        try:
            at_head = future.result(timeout=self.timeout)
        except FutureTimeout:
            return f"the database did not answer within {self.timeout:g} s"
        except Exception as exc:
            log.warning("readiness check failed: %s", exc)
            return f"the database is unreachable: {type(exc).__name__}: {str(exc)[:300]}"
        if not at_head:
            return "the database schema is not at the latest migration; run `digest db upgrade`"
        return None


@router.get("/readyz", responses={503: {"description": "not ready, with the reason"}})
def readyz(request: Request) -> JSONResponse:
    """Ready when the database answers and its schema is at the latest migration."""
    reason = request.app.state.readiness()
    if reason is not None:
        return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
    return JSONResponse({"status": "ok"})


@router.get("/metrics", response_class=Response)
def metrics(request: Request) -> Response:
    """Metrics of this process in the Prometheus text format."""
    return Response(request.app.state.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
