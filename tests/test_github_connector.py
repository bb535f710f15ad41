"""The GitHub connector against the fake server: paging, validators, limits and failures."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from connectors.github import GitHubClient, GitHubError, NotFound, RateLimited
from tests.conftest import TOKEN
from tests.fake_github import FakeGitHub

SECONDARY = '{"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}'


class RecordingSleep:
    """Stands in for time.sleep: records each wait and moves the fake's clock instead."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.fake.advance(seconds)


@pytest.fixture
def sleep(fake_github: FakeGitHub) -> RecordingSleep:
    return RecordingSleep(fake_github)


@pytest.fixture
def github(fake_github: FakeGitHub, sleep: RecordingSleep) -> Iterator[GitHubClient]:
    repo = fake_github.repo("acme/lib")
    repo.commit("initial", committed_at=datetime(2026, 1, 1, tzinfo=UTC))
    for number in range(1, 251):
        repo.merge_pull(
            number,
            f"change {number}",
            merged_at=datetime(2026, 2, 1, tzinfo=UTC) + timedelta(minutes=number),
        )
    client = GitHubClient(
        fake_github.base_url,
        TOKEN,
        sleep=sleep,
        clock=lambda: fake_github.now().timestamp(),
        max_attempts=4,
    )
    with client:
        yield client


def pull_numbers(github: GitHubClient, etag: str | None = None) -> list[int]:
    return [
        item["number"]
        for page in github.iter_closed_pull_pages("acme/lib", etag)
        for item in page.items
    ]


def test_pages_follow_link_headers_newest_update_first(
    github: GitHubClient, fake_github: FakeGitHub
) -> None:
    assert pull_numbers(github) == list(range(250, 0, -1))
    assert len(fake_github.requests) == 3
    assert all(r.query.get("per_page") == "100" for r in fake_github.requests)
    assert all(
        r.request_headers["authorization"] == f"Bearer {TOKEN}" for r in fake_github.requests
    )


def test_stored_etag_gives_a_free_304(github: GitHubClient, fake_github: FakeGitHub) -> None:
    first = next(iter(github.iter_closed_pull_pages("acme/lib", None)))
    fake_github.reset_log()
    pages = list(github.iter_closed_pull_pages("acme/lib", first.etag))
    assert len(pages) == 1 and pages[0].not_modified and pages[0].items == []
    assert [(r.status, r.cost) for r in fake_github.requests] == [(304, 0)]
    assert fake_github.requests[0].request_headers["if-none-match"] == first.etag


def test_retry_after_is_honoured(
    github: GitHubClient, fake_github: FakeGitHub, sleep: RecordingSleep
) -> None:
    fake_github.fail_next(403, headers={"retry-after": "7"}, body=SECONDARY)
    assert len(pull_numbers(github)) == 250
    assert sleep.waits[0] >= 7


def test_secondary_limit_without_retry_after_waits_at_least_a_minute(
    github: GitHubClient, fake_github: FakeGitHub, sleep: RecordingSleep
) -> None:
    fake_github.fail_next(403, count=2, body=SECONDARY)
    assert len(pull_numbers(github)) == 250
    assert sleep.waits[0] >= 60 and sleep.waits[1] >= 2 * 60


def test_429_is_a_rate_limit_too(
    github: GitHubClient, fake_github: FakeGitHub, sleep: RecordingSleep
) -> None:
    fake_github.fail_next(429)
    assert len(pull_numbers(github)) == 250
    assert sleep.waits[0] >= 60


def test_server_errors_are_retried_with_growing_jittered_backoff(
    github: GitHubClient, fake_github: FakeGitHub, sleep: RecordingSleep
) -> None:
    fake_github.fail_next(502)
    fake_github.fail_next(503)
    fake_github.fail_next(504)
    assert len(pull_numbers(github)) == 250
    assert len(sleep.waits) == 3
    assert 0.5 <= sleep.waits[0] <= 1.5 and 2 <= sleep.waits[2] <= 6


def test_persistent_5xx_gives_up_after_max_attempts(
    github: GitHubClient, fake_github: FakeGitHub
) -> None:
    fake_github.fail_next(502, count=10)
    with pytest.raises(GitHubError, match="after 4 attempts"):
        pull_numbers(github)
    assert len(fake_github.requests) == 4


def test_final_errors_are_not_retried(github: GitHubClient, fake_github: FakeGitHub) -> None:
    with pytest.raises(NotFound):
        list(github.iter_release_pages("acme/absent", None))
    fake_github.fail_next(422, body='{"message": "Validation Failed"}')
    with pytest.raises(GitHubError, match=r"422.*Validation Failed"):
        pull_numbers(github)
    assert len(fake_github.requests) == 2


def test_bad_token_is_a_clear_final_error(fake_github: FakeGitHub) -> None:
    client = GitHubClient(fake_github.base_url, "wrong", sleep=lambda _s: None)
    with client, pytest.raises(GitHubError, match=r"401.*Bad credentials"):
        list(client.iter_release_pages("acme/lib", None))


def test_spent_primary_limit_waits_for_the_reset_when_close(
    github: GitHubClient, fake_github: FakeGitHub, sleep: RecordingSleep
) -> None:
    fake_github.rate_limit = 1
    github.max_rate_limit_wait = 7200
    assert len(pull_numbers(github)) == 250
    assert any(wait >= 3000 for wait in sleep.waits)


def test_spent_primary_limit_raises_when_the_reset_is_too_far(
    fake_github: FakeGitHub,
) -> None:
    fake_github.repo("acme/lib").commit("initial")
    fake_github.rate_limit = 0
    with (
        GitHubClient(
            fake_github.base_url,
            TOKEN,
            max_rate_limit_wait=60,
            clock=lambda: fake_github.now().timestamp(),
        ) as client,
        pytest.raises(RateLimited) as raised,
    ):
        list(client.iter_release_pages("acme/lib", None))
    assert raised.value.reset_at > fake_github.now()


def test_non_json_answer_is_an_error_not_a_crash(
    github: GitHubClient, fake_github: FakeGitHub
) -> None:
    fake_github.fail_next(200, body="<html>maintenance</html>")
    with pytest.raises(GitHubError, match="not JSON"):
        pull_numbers(github)


def test_one_request_at_a_time_per_host(github: GitHubClient, fake_github: FakeGitHub) -> None:
    fake_github.latency = 0.01
    other = GitHubClient(fake_github.base_url, TOKEN)
    threads = [
        threading.Thread(target=pull_numbers, args=(client,))
        for client in (github, other, github, other)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    other.close()
    assert len(fake_github.requests) == 12
    assert fake_github.max_in_flight == 1


def test_timeouts_and_refused_connections_are_retried_then_reported() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts connections, never answers
        port = silent.getsockname()[1]
        with GitHubClient(
            f"http://127.0.0.1:{port}", None, timeout=0.2, max_attempts=2, sleep=lambda _s: None
        ) as client:
            with pytest.raises(GitHubError, match="timeout"):
                list(client.iter_release_pages("acme/lib", None))
            assert client.stats.requests == 2
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with (
        GitHubClient(
            f"http://127.0.0.1:{port}", None, max_attempts=2, sleep=lambda _s: None
        ) as client,
        pytest.raises(GitHubError, match="connection error"),
    ):
        list(client.iter_release_pages("acme/lib", None))
