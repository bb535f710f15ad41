"""The desk in a real headless Chromium (Debian's), driven by Playwright: exclude, pin,
reload, publish, and see the next week's "previously reported" badge."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Page, sync_playwright
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.sync.service import ProjectSyncer
from tests.conftest import bearer
from tests.fake_github import FakeGitHub
from tests.test_digest import IN_WEEK, at
from tests.test_digest import store as store

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(factory: sessionmaker[Session], store: None) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(factory), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the test server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def item(page: Page, key: str):  # type: ignore[no-untyped-def]
    return page.locator(f'.theme [data-key="{key}"]')


@pytest.mark.skipif(
    shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed (.ci/run installs it)",
)
def test_editor_goes_from_draft_to_published_issue_in_the_browser(
    served: str,
    factory: sessionmaker[Session],
    fake_github: FakeGitHub,
    syncer: ProjectSyncer,
    request: pytest.FixtureRequest,
) -> None:
    if request.node.callspec.params.get("engine") != "sqlite":
        pytest.skip("one browser run is enough; the store is covered on both databases")
    token = bearer(factory, "editor", "alice")["Authorization"].split()[1]
    ARTIFACTS.mkdir(exist_ok=True)
    glm, kernel = "pr:vllm-project/vllm#102", "pr:vllm-project/vllm#106"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(15_000)
            page.goto(f"{served}/desk?start=2026-09-30&end=2026-10-06")
            page.fill("#token", token)
            page.dispatch_event("#token", "change")
            with page.expect_navigation():
                item(page, glm).locator('button[data-action="exclude"]').click()
            with page.expect_navigation():
                item(page, kernel).locator('button[data-action="pin"]').click()
            page.reload()
            assert page.locator(f'#excluded [data-key="{glm}"]').count() == 1
            assert item(page, glm).count() == 0
            pinned = page.locator('section[data-theme="pinned"]')
            assert pinned.locator(f'[data-key="{kernel}"]').count() == 1
            page.screenshot(path=str(ARTIFACTS / "desk.png"), full_page=True)

            page.once("dialog", lambda dialog: dialog.accept())
            page.click("#publish")
            page.wait_for_function(
                "document.getElementById('status').textContent.includes('已发布第 1 期')"
            )

            fake_github.repo("vllm-project/vllm").release(
                "v0.31.1", published_at=at(IN_WEEK, 24 * 7 + 5)
            )
            fake_github.advance(3600)
            assert syncer.sync("vllm-project/vllm").ok
            page.goto(f"{served}/desk?start=2026-10-07&end=2026-10-13")
            badge = item(page, kernel).locator(".badge.reported")
            assert badge.inner_text() == "第 1 期已报道"
            page.screenshot(path=str(ARTIFACTS / "desk-next-week.png"), full_page=True)
        finally:
            browser.close()
