"""Whole processes: `digest sync` killed mid-sync and restarted, and `digest serve` end to end.

Both talk to the fake GitHub on 127.0.0.1 only, with bounded waits."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.config import Settings
from service.projects.models import Project
from service.sync.service import ProjectSyncer
from tests.conftest import TOKEN
from tests.fake_github import FakeGitHub
from tests.store_snapshot import snapshot, track
from tests.test_sync import build_cherry_pick_repo, load_history

REPOS = ["tile-ai/tilelang", "acme/engine"]


def digest_env(settings: Settings, fake: FakeGitHub, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update(
        DIGEST_DATABASE_URL=settings.resolved_database_url,
        DIGEST_GITHUB_API_URL=fake.base_url,
        DIGEST_BACKFILL_DAYS="3650",
        GITHUB_TOKEN=TOKEN,
        **extra,
    )
    return env


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def start_digest(
    *args: str, env: dict[str, str], cwd: Path, keep_stderr: bool = False
) -> subprocess.Popen[str]:
    """``digest <args>`` in its own process; its stderr is kept (read it with ``terminate``)
    or dropped, so that a process nobody reads from never blocks on a full pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "service", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE if keep_stderr else subprocess.DEVNULL,
        text=True,
    )


def terminate(process: subprocess.Popen[str], timeout: float = 20) -> str:
    """SIGTERM a service process, wait a bounded time (then kill it); returns its stderr."""
    process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return stderr or ""


def wipe_projects(factory: sessionmaker[Session]) -> None:
    with factory.begin() as session:
        for project in session.scalars(select(Project)):
            session.delete(project)


def test_sync_killed_mid_pass_and_restarted_loses_nothing_and_duplicates_nothing(
    fake_github: FakeGitHub,
    factory: sessionmaker[Session],
    settings: Settings,
    syncer: ProjectSyncer,
    tmp_path: Path,
) -> None:
    load_history(fake_github)
    build_cherry_pick_repo(fake_github)
    for repo in REPOS:
        track(factory, repo)
    assert all(syncer.sync(repo).ok for repo in REPOS)
    expected = snapshot(factory)
    clean_requests = len(fake_github.requests)

    wipe_projects(factory)
    for repo in REPOS:
        track(factory, repo)
    env = digest_env(settings, fake_github)
    fake_github.latency = 0.02
    for kill_after in (4, clean_requests // 2):
        fake_github.reset_log()
        process = start_digest("sync", env=env, cwd=tmp_path)
        try:
            wait_until(
                lambda n=kill_after: len(fake_github.requests) >= n, 60, f"{kill_after} requests"
            )
            process.send_signal(signal.SIGKILL)
        finally:
            process.wait(timeout=10)
        assert process.returncode == -signal.SIGKILL
    fake_github.latency = 0.0
    finished = subprocess.run(
        [sys.executable, "-m", "service", "sync"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert snapshot(factory) == expected


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_adds_a_project_backfills_it_and_serves_the_draft(
    fake_github: FakeGitHub, settings: Settings, factory: sessionmaker[Session], tmp_path: Path
) -> None:
    build_cherry_pick_repo(fake_github)
    env = digest_env(settings, fake_github, DIGEST_POLL_INTERVAL="3600")
    created = subprocess.run(
        [sys.executable, "-m", "service", "tokens", "create", "--role", "editor", "--name", "e2e"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip().splitlines()[-1]
    assert token.startswith("dgt_")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start_digest("serve", "--port", str(port), env=env, cwd=tmp_path, keep_stderr=True)
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, timeout=5, headers=headers) as http:

            def up() -> bool:
                try:
                    return http.get("/healthz").status_code == 200
                except httpx.TransportError:
                    return False

            wait_until(up, 30, "digest serve to listen")
            assert http.post("/v1/projects", json={"repo": "acme/engine"}).status_code == 201

            def synced() -> bool:
                state = http.get("/v1/projects/acme/engine").json()["sync"]
                return bool(state and state["last_success_at"])

            wait_until(synced, 30, "the first sync")
            draft = http.get(
                "/v1/digests/draft",
                params={"start": "2026-09-05", "end": "2026-09-11", "include": "all"},
            )
            assert draft.status_code == 200
            items = {i["number"]: i for t in draft.json()["themes"] for i in t["items"]}
            assert items[2]["timing"] == "released_merged_earlier"
            assert items[4]["first_stable_release"]["tag"] == "v1.1.0"
    finally:
        stderr = terminate(process, timeout=15)
    # uvicorn shuts down gracefully, then re-raises SIGTERM so the exit status tells why.
    assert process.returncode in (0, -signal.SIGTERM), stderr[-2000:]
    assert "Application shutdown complete" in stderr
