"""The ``digest`` command: serve, worker, sync, draft, db upgrade, projects."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
from sqlalchemy.orm import Session, sessionmaker

from service import migrate
from service.config import Settings, get_settings
from service.database import make_engine, make_session_factory, transaction
from service.errors import ServiceError
from service.projects import service as projects
from service.themes import Taxonomy, taxonomy_from

log = logging.getLogger("digest")


def configure_logging(level: str = "INFO", log_format: str | None = None) -> None:
    """Plain text lines, or one JSON object per line (with the request id) when
    ``log_format`` (default: ``DIGEST_LOG_FORMAT``) is ``json``."""
    if log_format is None:
        log_format = os.environ.get("DIGEST_LOG_FORMAT", "text")
    handler = logging.StreamHandler(sys.stderr)
    if log_format.lower() == "json":
        from service.observability.logs import JsonFormatter

        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    for chatty in (
        "httpx",
        "alembic.runtime.migration",
        "apscheduler.executors.default",
        "apscheduler.scheduler",
    ):
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))


def open_store(settings: Settings) -> sessionmaker[Session]:
    engine = make_engine(settings.resolved_database_url)
    migrate.upgrade(engine)
    return make_session_factory(engine)


def load_projects_file(settings: Settings, factory: sessionmaker[Session]) -> None:
    if settings.projects_file is None:
        return
    specs = projects.load_projects_file(settings.projects_file)
    with transaction(factory) as session:
        for spec in specs:
            projects.add(session, spec, exist_ok=True)
    log.info("projects file %s: %d project(s)", settings.projects_file, len(specs))


def load_taxonomy(settings: Settings) -> Taxonomy:
    try:
        return taxonomy_from(settings.themes_file, settings.models_file)
    except (OSError, ServiceError) as exc:
        fail(f"cannot load the theme taxonomy: {exc}")


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


@click.group()
@click.option("--log-level", default="INFO", show_default=True)
def main(log_level: str) -> None:
    """Weekly digest of AI infrastructure releases and merged pull requests."""
    configure_logging(log_level.upper())


@main.group()
def db() -> None:
    """Database schema."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply every migration (Alembic) to the configured database."""
    settings = get_settings()
    migrate.upgrade(make_engine(settings.resolved_database_url))
    click.echo("database is at the latest revision")


@main.command()
@click.option("--host", default=None, help="listen address (DIGEST_HOST)")
@click.option("--port", default=None, type=int, help="listen port (DIGEST_PORT)")
def serve(host: str | None, port: int | None) -> None:
    """Run the API and the poller on one process (embedded SQLite by default)."""
    import uvicorn

    from service.app import create_app
    from service.observability.metrics import Metrics
    from service.scheduler import Poller
    from service.webhooks.worker import DeliveryWorker

    settings = get_settings()
    factory = open_store(settings)
    try:
        load_projects_file(settings, factory)
    except ServiceError as exc:
        fail(exc.message)
    with factory() as session:
        tracked = len(projects.list_all(session))
    if tracked == 0:
        log.info(
            "no project is tracked yet: `digest projects import` tracks the default catalog "
            "(DESIGN §7: ~28 projects and 3 blogs), or POST /v1/projects adds one"
        )
    warning = settings.token_warning(tracked)
    if warning:
        log.warning(warning)
    log.info("database: %s", make_engine(settings.resolved_database_url).url.render_as_string())
    metrics = Metrics()
    poller = Poller(factory, settings, metrics=metrics)
    app = create_app(
        factory,
        settings=settings,
        taxonomy=load_taxonomy(settings),
        sync_trigger=poller.run_now,
        on_project_added=poller.add_project,
        on_project_removed=poller.remove_project,
        metrics=metrics,
    )
    deliveries = DeliveryWorker(factory, settings, metrics=metrics)
    try:
        poller.start()
    except RuntimeError as exc:
        fail(str(exc))
    deliveries.start()
    try:
        uvicorn.run(app, host=host or settings.host, port=port or settings.port, log_config=None)
    finally:
        poller.shutdown()
        deliveries.stop()


@main.command()
@click.option("--host", default=None, help="listen address (DIGEST_HOST)")
@click.option("--port", default=None, type=int, help="listen port (DIGEST_PORT)")
@click.option("--workers", default=2, show_default=True, help="uvicorn worker processes")
def api(host: str | None, port: int | None, workers: int) -> None:
    """Run only the API, in several processes; `digest worker` polls and delivers."""
    import uvicorn

    settings = get_settings()
    engine = make_engine(settings.resolved_database_url)
    if engine.dialect.name == "sqlite" and workers > 1:
        fail("SQLite mode is single-process: use `digest serve`, or PostgreSQL for `digest api`")
    if not migrate.is_at_head(engine):
        log.warning("the database is not at the latest migration: run `digest db upgrade`")
    uvicorn.run(
        "service.app:production_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        workers=workers,
        log_config=None,
    )


@main.command()
def worker() -> None:
    """Run the poller and the webhook delivery worker, without the API."""
    import signal
    import threading

    from service.observability.metrics import Metrics
    from service.scheduler import Poller
    from service.webhooks.worker import DeliveryWorker

    settings = get_settings()
    factory = open_store(settings)
    try:
        load_projects_file(settings, factory)
    except ServiceError as exc:
        fail(exc.message)
    metrics = Metrics()
    if settings.metrics_port is not None:
        from prometheus_client import start_http_server

        start_http_server(settings.metrics_port, addr=settings.host, registry=metrics.registry)
        log.info("metrics on http://%s:%d/metrics", settings.host, settings.metrics_port)
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    poller = Poller(factory, settings, metrics=metrics)
    deliveries = DeliveryWorker(factory, settings, metrics=metrics)
    try:
        poller.start()
    except RuntimeError as exc:
        fail(str(exc))
    deliveries.start()
    log.info("polling and delivering webhooks (%s); stop with Ctrl-C", poller.identity)
    try:
        stopping.wait()
    finally:
        poller.shutdown()
        deliveries.stop()


@main.command()
@click.option("--repo", default=None, help="sync one repository (default: all tracked)")
def sync(repo: str | None) -> None:
    """Run one sync pass in the foreground."""
    from connectors.feeds import FeedClient
    from connectors.pypi import PyPIClient
    from service.posts import service as posts
    from service.scheduler import make_client
    from service.sync.service import ProjectSyncer

    settings = get_settings()
    factory = open_store(settings)
    try:
        load_projects_file(settings, factory)
        with factory() as session:
            repos = (
                [projects.get(session, repo).repo]
                if repo
                else [p.repo for p in projects.list_all(session)]
            )
    except ServiceError as exc:
        fail(exc.message)
    if not repos:
        fail("no project is tracked; add one with `digest projects add owner/name`")
    warning = settings.token_warning(len(repos))
    if warning:
        click.echo(f"warning: {warning}", err=True)
    failures = 0
    with (
        make_client(settings) as client,
        FeedClient(timeout=settings.http_timeout) as feeds,
        PyPIClient(settings.pypi_url, timeout=settings.http_timeout) as pypi,
    ):
        syncer = ProjectSyncer(factory, settings, client, feeds=feeds, pypi=pypi)
        with click.progressbar(length=len(repos) * 3, label="syncing", file=sys.stderr) as bar:
            for name in repos:
                report = syncer.sync(name, progress=lambda _stage: bar.update(1))
                if not report.ok:
                    failures += 1
                    click.echo(f"\n{name}: {report.error}", err=True)
        if repo is None:
            with factory() as session:
                feed_keys = [feed.key for feed in posts.list_feeds(session)]
            for key in feed_keys:
                if posts.sync_feed(factory, feeds, key) < 0:
                    failures += 1
                    click.echo(f"feed {key}: failed (see GET /v1/feeds)", err=True)
        click.echo(
            f"{len(repos) - failures}/{len(repos)} project(s) synced; "
            f"{client.stats.requests} request(s), {client.stats.not_modified} not modified"
        )
    sys.exit(1 if failures else 0)


@main.command()
@click.option("--batch", default=1000, show_default=True, help="changes per transaction")
def reanalyze(batch: int) -> None:
    """Re-analyse every change stored under another taxonomy or classifier version (the
    worker also does it, a batch at a time)."""
    from service import analysis
    from service.database import transaction

    settings = get_settings()
    factory = open_store(settings)
    taxonomy = load_taxonomy(settings)
    with factory() as session:
        stale = analysis.count_stale(session, taxonomy)
    done = 0
    with click.progressbar(length=stale, label="re-analysing", file=sys.stderr) as bar:
        while True:
            with transaction(factory) as session:
                count = analysis.refresh_stale(session, taxonomy, max(batch, 1))
            done += count
            bar.update(count)
            if count == 0:
                break
    click.echo(f"{done} change(s) re-analysed; version {analysis.analysis_version(taxonomy)}")


@main.command()
@click.option("--start", required=True, help="first day, YYYY-MM-DD (UTC)")
@click.option("--end", required=True, help="last day, YYYY-MM-DD (UTC, inclusive)")
@click.option("--format", "output", type=click.Choice(["json", "md"]), default="json")
@click.option("--include", type=click.Choice(["highlights", "all"]), default="highlights")
@click.option("--repo", default=None)
@click.option("--model", default=None, help="only changes touching a model family, e.g. kimi")
@click.option("--lang", type=click.Choice(["zh", "en"]), default="zh")
def draft(
    start: str, end: str, output: str, include: str, repo: str | None, model: str | None, lang: str
) -> None:
    """Print the draft digest of a window."""
    from service.digests.render import render_markdown
    from service.digests.service import build_draft
    from service.windows import window_for

    settings = get_settings()
    factory = open_store(settings)
    taxonomy = load_taxonomy(settings)
    try:
        window = window_for(start, end)
        with factory() as session:
            repo_key = projects.get(session, repo).repo_key if repo else None
            result: dict[str, Any] = build_draft(
                session,
                window,
                include_all=include == "all",
                repo_key=repo_key,
                model=model,
                taxonomy=taxonomy,
            )
    except ServiceError as exc:
        fail(exc.message)
    if output == "md":
        click.echo(render_markdown(result, lang, taxonomy), nl=False)
    else:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))


@main.group(name="projects")
def projects_group() -> None:
    """Tracked projects."""


@projects_group.command("add")
@click.argument("repo")
@click.option("--name", default=None)
@click.option("--category", default=None)
def projects_add(repo: str, name: str | None, category: str | None) -> None:
    factory = open_store(get_settings())
    try:
        with transaction(factory) as session:
            project = projects.add(session, projects.ProjectSpec(repo, name, category))
            click.echo(f"tracking {project.repo}")
    except ServiceError as exc:
        fail(exc.message)


@projects_group.command("import")
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="a catalog TOML (default: the packaged catalog of DESIGN §7)",
)
def projects_import(path: Path | None) -> None:
    """Track every project and blog of the catalog (running it again changes nothing)."""
    from service.catalog import load_catalog
    from service.projects.catalog_import import import_catalog

    factory = open_store(get_settings())
    try:
        catalog = load_catalog(path)
        with transaction(factory) as session:
            result = import_catalog(session, catalog)
    except ServiceError as exc:
        fail(exc.message)
    click.echo(
        f"{len(catalog.projects)} project(s): {len(result.added)} added, "
        f"{len(result.updated)} updated; {len(result.feeds)} blog feed(s)"
    )


@projects_group.command("list")
def projects_list() -> None:
    factory = open_store(get_settings())
    with factory() as session:
        for project in projects.list_all(session):
            click.echo(f"{project.repo}\t{project.name}\t{project.category or ''}")


@projects_group.command("remove")
@click.argument("repo")
def projects_remove(repo: str) -> None:
    factory = open_store(get_settings())
    try:
        with transaction(factory) as session:
            projects.remove(session, repo)
    except ServiceError as exc:
        fail(exc.message)
    click.echo(f"no longer tracking {repo}")


@main.group(name="tokens")
def tokens_group() -> None:
    """API tokens (reader, editor, admin)."""


@tokens_group.command("create")
@click.option("--role", type=click.Choice(["reader", "editor", "admin"]), required=True)
@click.option("--name", required=True, help="who or what the token is for")
def tokens_create(role: str, name: str) -> None:
    """Create a token; it is printed once and stored only as a hash."""
    from service.auth import service as tokens

    factory = open_store(get_settings())
    try:
        with transaction(factory) as session:
            token, plain = tokens.create(session, name, tokens.Role.parse(role))
            click.echo(
                f"token {token.id} for {token.name} ({token.role}); keep it, it is not shown again:"
            )
    except ServiceError as exc:
        fail(exc.message)
    click.echo(plain)


@tokens_group.command("list")
def tokens_list() -> None:
    from service.auth import service as tokens

    factory = open_store(get_settings())
    with factory() as session:
        for token in tokens.list_all(session):
            state = f"revoked {token.revoked_at:%Y-%m-%d}" if token.revoked_at else "active"
            click.echo(f"{token.id}\t{token.name}\t{token.role}\t{token.prefix}…\t{state}")


@tokens_group.command("revoke")
@click.argument("token_id", type=int)
def tokens_revoke(token_id: int) -> None:
    from service.auth import service as tokens

    factory = open_store(get_settings())
    try:
        with transaction(factory) as session:
            tokens.revoke(session, token_id)
    except ServiceError as exc:
        fail(exc.message)
    click.echo(f"token {token_id} revoked")
