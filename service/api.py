"""What every route shares: the database session dependency and the JSON error shape."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from service.errors import ServiceError

log = logging.getLogger(__name__)


class ErrorBody(BaseModel):
    error: str
    message: str
    details: list[Any] | None = None


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (400, 404, 409, 422)
}


def get_session(request: Request) -> Iterator[Session]:
    factory = request.app.state.session_factory
    with factory() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]
# Database ids and counts in paths and queries: bounded so that no number a client sends
# can overflow a column (SQLite and PostgreSQL integers are 64- and 32-bit).
MAX_ID = 2_147_483_647
DbId = Annotated[int, Path(ge=1, le=MAX_ID, description="a positive id")]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]


def error_response(status: int, code: str, message: str, details: Any = None) -> JSONResponse:
    body: dict[str, Any] = {"error": code, "message": message}
    if details is not None:
        body["details"] = details
    return JSONResponse(status_code=status, content=body)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status_code, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"location": list(e.get("loc", ())), "message": e.get("msg", "")} for e in exc.errors()
        ]
        summary = "; ".join(
            f"{'.'.join(str(p) for p in d['location'])}: {d['message']}" for d in details
        )
        return error_response(422, "validation_error", summary or "invalid request", details)

    @app.exception_handler(HTTPException)
    async def _http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        return error_response(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(OperationalError)
    async def _database_down(_request: Request, exc: OperationalError) -> JSONResponse:
        log.error("database unavailable: %s", exc.orig)
        return error_response(503, "database_unavailable", "the database is not reachable")

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return error_response(500, "internal_error", "internal error; see the service log")
