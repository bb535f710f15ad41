"""The FastAPI application: routers of every domain, mounted on one app."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from fastapi import Depends, FastAPI
from sqlalchemy.orm import Session, sessionmaker

from service.api import install_error_handlers
from service.auth.rules import authorize
from service.auth.views import router as tokens_router
from service.changes.views import router as changes_router
from service.config import Settings, get_settings
from service.curation.views import router as curation_router
from service.desk.views import router as desk_router
from service.digests.cache import DraftCache
from service.digests.views import router as digests_router
from service.observability.logs import RequestIdMiddleware
from service.observability.metrics import Metrics
from service.observability.views import ReadinessCheck
from service.observability.views import router as observability_router
from service.posts.views import router as feeds_router
from service.projects.views import router as projects_router
from service.releases.views import router as releases_router
from service.sync import requests as sync_requests
from service.sync.views import router as sync_router
from service.themes import Taxonomy, default_taxonomy
from service.webhooks.views import router as webhooks_router


def create_app(
    session_factory: sessionmaker[Session],
    *,
    sync_trigger: Callable[[str], None] | None = None,
    on_project_added: Callable[[str], None] | None = None,
    on_project_removed: Callable[[str], None] | None = None,
    taxonomy: Taxonomy | None = None,
    settings: Settings | None = None,
    metrics: Metrics | None = None,
) -> FastAPI:
    """``metrics``: the process's metrics; an app of its own gets a fresh registry."""
    app = FastAPI(
        title="AI infrastructure weekly digest",
        version="1",
        description=(
            "Releases and merged pull requests of tracked projects, as draft digests. "
            "Writes need `Authorization: Bearer <token>` of an editor (subscriptions and "
            "tokens: an admin); create tokens with `digest tokens create`."
        ),
        dependencies=[Depends(authorize)],
    )
    app.state.session_factory = session_factory
    app.state.settings = settings or get_settings()
    # without a poller in this process (``digest api``), a sync is queued in the store for
    # the workers
    app.state.sync_trigger = sync_trigger or partial(sync_requests.request, session_factory)
    app.state.on_project_added = on_project_added
    app.state.on_project_removed = on_project_removed
    app.state.taxonomy = taxonomy or default_taxonomy()
    app.state.metrics = metrics or Metrics()
    app.state.metrics.watch_deliveries(session_factory)
    app.state.draft_cache = DraftCache(
        max_materials=app.state.settings.draft_cache_windows,
        max_body_bytes=app.state.settings.draft_cache_mb * 1024 * 1024,
        on_lookup=app.state.metrics.draft_cache_lookup,
    )
    app.state.readiness = ReadinessCheck(
        session_factory.kw["bind"], timeout=app.state.settings.readiness_timeout
    )
    app.add_middleware(RequestIdMiddleware)
    install_error_handlers(app)
    for router in (
        projects_router,
        sync_router,
        releases_router,
        changes_router,
        digests_router,
        curation_router,
        feeds_router,
        webhooks_router,
        tokens_router,
        desk_router,
        observability_router,
    ):
        app.include_router(router)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app


def production_app() -> FastAPI:
    """The app of ``digest api`` workers (uvicorn factory): the store is migrated by
    ``digest db upgrade`` (the compose file's one-shot job), syncs are queued for
    ``digest worker`` processes, and /readyz says when migrations are not at head."""
    from service.database import make_engine, make_session_factory
    from service.themes import taxonomy_from

    settings = get_settings()
    factory = make_session_factory(make_engine(settings.resolved_database_url))
    return create_app(
        factory,
        settings=settings,
        taxonomy=taxonomy_from(settings.themes_file, settings.models_file),
    )
