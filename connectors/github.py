"""GitHub REST v3 connector: releases, merged pull requests, compares and commits.

Fetch and parse into plain records; no database access. Callers hand in the ETags they
stored and get back the new ones, so that a validator is only saved with its data.
Behaviour follows GitHub's documented rules: ``Link`` pagination, conditional requests
(an authenticated 304 costs no quota), primary and secondary rate limits, retries with
jittered exponential backoff for 5xx and timeouts, and one request at a time per host.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from connectors.http import gate_for

log = logging.getLogger(__name__)

PER_PAGE = 100
API_VERSION = "2022-11-28"
SECONDARY_LIMIT_MIN_WAIT = 60.0
RETRYABLE_STATUSES = frozenset({408, 500, 502, 503, 504})
T = TypeVar("T")


class GitHubError(Exception):
    """A request failed for good; ``status`` is None for transport failures."""

    def __init__(self, message: str, *, status: int | None = None, url: str | None = None):
        super().__init__(message)
        self.status = status
        self.url = url


class NotFound(GitHubError):
    pass


class RateLimited(GitHubError):
    """The primary rate limit is spent and its reset is further away than we may wait."""

    def __init__(self, message: str, *, reset_at: datetime, url: str | None = None):
        super().__init__(message, status=403, url=url)
        self.reset_at = reset_at


class RecordError(ValueError):
    """One item of a response could not be parsed; the item is skipped, the rest kept."""


def parse_timestamp(value: Any, field_name: str) -> datetime:
    if not isinstance(value, str) or not value:
        raise RecordError(f"{field_name}: expected an ISO-8601 timestamp, got {value!r}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise RecordError(f"{field_name}: malformed timestamp {value!r}") from exc
    if parsed.tzinfo is None:
        raise RecordError(f"{field_name}: timestamp {value!r} has no UTC offset")
    return parsed.astimezone(UTC)


def optional_timestamp(value: Any, field_name: str) -> datetime | None:
    return None if value is None else parse_timestamp(value, field_name)


@dataclass(frozen=True)
class ReleaseRecord:
    github_id: int | None
    tag: str
    name: str | None
    body: str
    draft: bool
    prerelease: bool
    created_at: datetime | None
    published_at: datetime | None
    html_url: str
    target_commitish: str | None

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> ReleaseRecord:
        tag = data.get("tag_name")
        if not isinstance(tag, str) or not tag.strip():
            raise RecordError(f"release {data.get('id')!r} has no tag_name")
        return cls(
            github_id=data.get("id"),
            tag=tag,
            name=data.get("name"),
            body=data.get("body") or "",
            draft=bool(data.get("draft")),
            prerelease=bool(data.get("prerelease")),
            created_at=optional_timestamp(data.get("created_at"), f"release {tag} created_at"),
            published_at=optional_timestamp(
                data.get("published_at"), f"release {tag} published_at"
            ),
            html_url=str(data.get("html_url") or ""),
            target_commitish=data.get("target_commitish"),
        )


@dataclass(frozen=True)
class PullRecord:
    github_id: int | None
    number: int
    title: str
    body: str
    author: str | None
    labels: tuple[str, ...]
    merged_at: datetime | None
    merge_commit_sha: str | None
    base_branch: str | None
    html_url: str
    updated_at: datetime

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> PullRecord:
        number = data.get("number")
        if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
            raise RecordError(f"pull request with invalid number {number!r}")
        user = data.get("user") or {}
        base = data.get("base") or {}
        return cls(
            github_id=data.get("id"),
            number=number,
            title=str(data.get("title") or ""),
            body=data.get("body") or "",
            author=user.get("login") if isinstance(user, dict) else None,
            labels=tuple(
                str(label["name"])
                for label in data.get("labels") or []
                if isinstance(label, dict) and label.get("name")
            ),
            merged_at=optional_timestamp(data.get("merged_at"), f"pull #{number} merged_at"),
            merge_commit_sha=data.get("merge_commit_sha"),
            base_branch=base.get("ref") if isinstance(base, dict) else None,
            html_url=str(data.get("html_url") or ""),
            updated_at=parse_timestamp(data.get("updated_at"), f"pull #{number} updated_at"),
        )


@dataclass(frozen=True)
class CommitRecord:
    sha: str
    subject: str

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> CommitRecord:
        sha = data.get("sha")
        if not isinstance(sha, str) or not sha:
            raise RecordError("commit without sha")
        message = ((data.get("commit") or {}).get("message")) or ""
        return cls(sha=sha, subject=message.splitlines()[0] if message else "")


@dataclass(frozen=True)
class Range:
    """The commits of a compare (oldest first) and the commit the head ref points at."""

    commits: list[CommitRecord]
    head_sha: str | None


@dataclass
class Page:
    items: list[dict[str, Any]]
    url: str
    etag: str | None
    not_modified: bool = False


@dataclass
class RequestStats:
    requests: int = 0
    not_modified: int = 0
    retries: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    rate_limit_remaining: int | None = None
    rate_limit_reset: datetime | None = None


def parse_link_header(value: str | None) -> dict[str, str]:
    links: dict[str, str] = {}
    for part in (value or "").split(","):
        match = re.match(r'\s*<([^>]+)>\s*;\s*rel="([^"]+)"', part)
        if match:
            links[match.group(2)] = match.group(1)
    return links


def resource_of(url: str, base_path: str = "") -> str:
    """The resource a request is for: "releases", "pulls", "compare", "commits", ...
    ``base_path`` is the API's own path prefix (``/api/v3`` on GitHub Enterprise)."""
    path = urlsplit(url).path
    if base_path and path.startswith(base_path):
        path = path[len(base_path) :]
    parts = path.split("/")
    # /repos/{owner}/{name}/{resource}/... or /repositories/{id}/{resource}/...
    if len(parts) > 4 and parts[1] == "repos":
        return parts[4]
    if len(parts) > 3 and parts[1] == "repositories":
        return parts[3]
    if len(parts) > 3 and parts[1] == "repos":
        return "repository"
    return parts[1] if len(parts) > 1 and parts[1] else "other"


def extract_records(
    items: list[dict[str, Any]], parse: Callable[[dict[str, Any]], T], what: str
) -> list[T]:
    records: list[T] = []
    for item in items:
        try:
            records.append(parse(item))
        except (RecordError, TypeError, KeyError, AttributeError) as exc:
            log.warning("skipping %s: %s", what, exc)
    return records


class GitHubClient:
    def __init__(
        self,
        api_url: str = "https://api.github.com",
        token: str | None = None,
        *,
        timeout: float = 30.0,
        max_attempts: int = 6,
        max_rate_limit_wait: float = 900.0,
        backoff_base: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        on_response: Callable[[str, int], None] | None = None,
    ) -> None:
        """``on_response(resource, status)`` is called after every response (retries
        included), e.g. to count requests by resource and status."""
        self.api_url = api_url.rstrip("/")
        self.on_response = on_response
        self.token = token
        self.max_attempts = max_attempts
        self.max_rate_limit_wait = max_rate_limit_wait
        self.backoff_base = backoff_base
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        self.stats = RequestStats()
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "ai-infra-digest",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(headers=headers, timeout=timeout, follow_redirects=True)
        self.gate = gate_for(urlsplit(self.api_url).netloc)
        self._base_path = urlsplit(self.api_url).path.rstrip("/")

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- transport -------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        return self.backoff_base * (2**attempt) * (0.5 + self.rng.random())

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.sleep(seconds)

    def _send(self, url: str, params: dict[str, Any] | None, etag: str | None) -> httpx.Response:
        headers = {"If-None-Match": etag} if etag else {}
        with self.gate.lock:
            self._wait(self.gate.blocked_until - self.clock())
            self.stats.requests += 1
            return self.http.get(url, params=params, headers=headers)

    def _block_host(self, seconds: float) -> None:
        self.gate.blocked_until = max(self.gate.blocked_until, self.clock() + seconds)

    def _note_rate_limit(self, response: httpx.Response) -> None:
        remaining = response.headers.get("x-ratelimit-remaining")
        reset = response.headers.get("x-ratelimit-reset")
        if remaining and remaining.isdigit():
            self.stats.rate_limit_remaining = int(remaining)
        if reset and reset.isdigit():
            self.stats.rate_limit_reset = datetime.fromtimestamp(int(reset), UTC)

    def get(
        self, url: str, params: dict[str, Any] | None = None, etag: str | None = None
    ) -> httpx.Response:
        """GET with retries; returns a 2xx or 304 response or raises GitHubError."""
        last_problem = ""
        for attempt in range(self.max_attempts):
            try:
                response = self._send(url, params, etag)
            except httpx.TimeoutException as exc:
                last_problem = f"timeout: {exc}"
            except httpx.TransportError as exc:
                last_problem = f"connection error: {exc}"
            else:
                status = response.status_code
                self.stats.by_status[status] = self.stats.by_status.get(status, 0) + 1
                self._note_rate_limit(response)
                if self.on_response is not None:
                    try:
                        self.on_response(resource_of(url, self._base_path), status)
                    except Exception:
                        log.exception("on_response hook failed")
                if status == 304:
                    self.stats.not_modified += 1
                    return response
                if 200 <= status < 300:
                    return response
                if status in (403, 429):
                    wait = self._rate_limit_wait(response, attempt)
                    if wait is not None:
                        last_problem = f"rate limited ({status})"
                        self._block_host(wait)
                        self.stats.retries += 1
                        continue
                if status == 404:
                    raise NotFound(f"not found: {url}", status=404, url=url)
                if status not in RETRYABLE_STATUSES:
                    raise GitHubError(
                        f"GitHub answered {status} for {url}: {_message(response)}",
                        status=status,
                        url=url,
                    )
                last_problem = f"server error {status}"
            self.stats.retries += 1
            if attempt + 1 < self.max_attempts:
                self._wait(self._backoff(attempt))
        raise GitHubError(
            f"giving up on {url} after {self.max_attempts} attempts ({last_problem})", url=url
        )

    def _rate_limit_wait(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying a 403/429, or None if it is not a rate limit."""
        headers = response.headers
        retry_after = headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(float(retry_after), 1.0)
            except ValueError:
                return SECONDARY_LIMIT_MIN_WAIT
        if headers.get("x-ratelimit-remaining") == "0":
            reset = headers.get("x-ratelimit-reset", "")
            reset_at = int(reset) if reset.isdigit() else int(self.clock()) + 3600
            wait = reset_at - self.clock() + 1
            if wait > self.max_rate_limit_wait:
                raise RateLimited(
                    f"primary rate limit spent until {datetime.fromtimestamp(reset_at, UTC)}",
                    reset_at=datetime.fromtimestamp(reset_at, UTC),
                    url=str(response.request.url),
                )
            return max(wait, 1.0)
        if response.status_code == 429 or "secondary rate limit" in response.text.lower():
            return SECONDARY_LIMIT_MIN_WAIT * (2 ** min(attempt, 4))
        return None

    def iter_pages(
        self,
        path: str,
        params: dict[str, Any],
        etag: str | None = None,
    ) -> Iterator[Page]:
        """Pages of a list endpoint; the first page is sent with ``etag``.

        A 304 on the first page yields one empty ``not_modified`` page and stops."""
        url = f"{self.api_url}{path}"
        response = self.get(url, params, etag)
        first_url = str(response.request.url)
        while True:
            if response.status_code == 304:
                yield Page(items=[], url=first_url, etag=etag, not_modified=True)
                return
            try:
                items = response.json()
            except ValueError as exc:
                raise GitHubError(f"{url}: response is not JSON", url=url) from exc
            if not isinstance(items, list):
                raise GitHubError(f"{url}: expected a JSON list", url=url)
            page_url = str(response.request.url)
            yield Page(items=items, url=page_url, etag=response.headers.get("etag"))
            next_url = parse_link_header(response.headers.get("link")).get("next")
            if not next_url:
                return
            response = self.get(next_url)

    # -- resources -------------------------------------------------------------------

    def releases_url(self, repo: str) -> str:
        return f"/repos/{repo}/releases"

    def iter_release_pages(self, repo: str, etag: str | None) -> Iterator[Page]:
        return self.iter_pages(self.releases_url(repo), {"per_page": PER_PAGE}, etag)

    def iter_closed_pull_pages(self, repo: str, etag: str | None) -> Iterator[Page]:
        params = {
            "state": "closed",
            "sort": "updated",
            "direction": "desc",
            "per_page": PER_PAGE,
        }
        return self.iter_pages(f"/repos/{repo}/pulls", params, etag)

    def iter_tag_pages(self, repo: str, etag: str | None) -> Iterator[Page]:
        return self.iter_pages(f"/repos/{repo}/tags", {"per_page": PER_PAGE}, etag)

    def commit_date(self, repo: str, sha: str) -> datetime:
        """When a commit was committed (a tag-only version's date); it never changes."""
        response = self.get(f"{self.api_url}/repos/{repo}/commits/{quote(sha, safe='')}")
        data = response.json()
        commit = data.get("commit") if isinstance(data, dict) else None
        committer = (commit or {}).get("committer") or (commit or {}).get("author") or {}
        return parse_timestamp(committer.get("date"), f"commit {sha[:12]} date")

    def compare(self, repo: str, base: str, head: str) -> Range:
        """Every commit of ``base...head``, oldest first, paging past GitHub's 250 cap."""
        path = f"/repos/{repo}/compare/{quote(base, safe='')}...{quote(head, safe='')}"
        url = f"{self.api_url}{path}"
        commits: list[CommitRecord] = []
        listed_count = 0
        total: int | None = None
        merge_base_sha: str | None = None
        response = self.get(url, {"per_page": PER_PAGE, "page": 1})
        while True:
            data = response.json()
            if not isinstance(data, dict):
                raise GitHubError(f"{url}: expected a JSON object", url=url)
            if merge_base_sha is None:
                merge_base_sha = (data.get("merge_base_commit") or {}).get("sha")
            if total is None and isinstance(data.get("total_commits"), int):
                total = data["total_commits"]
            listed = data.get("commits") or []
            listed_count += len(listed)
            commits.extend(extract_records(listed, CommitRecord.from_api, "commit"))
            next_url = parse_link_header(response.headers.get("link")).get("next")
            if not next_url:
                break
            response = self.get(next_url)
        if total is not None and listed_count < total:
            raise GitHubError(
                f"{url}: compare listed {listed_count} of {total} commits",
                url=url,
            )
        # With nothing ahead, the head is an ancestor of the base: it is the merge base.
        return Range(commits, commits[-1].sha if commits else merge_base_sha)

    def history(self, repo: str, ref: str, since: datetime | None) -> Range:
        """Commits reachable from ``ref`` (since a date), oldest first: a root range."""
        params: dict[str, Any] = {"sha": ref, "per_page": PER_PAGE}
        if since is not None:
            params["since"] = since.strftime("%Y-%m-%dT%H:%M:%SZ")
        commits: list[CommitRecord] = []
        for page in self.iter_pages(f"/repos/{repo}/commits", params):
            commits.extend(extract_records(page.items, CommitRecord.from_api, "commit"))
        commits.reverse()
        return Range(commits, commits[-1].sha if commits else None)


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:200]
    return response.text[:200]
