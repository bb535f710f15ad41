"""PyPI availability of a release: is there a non-yanked wheel, and since when?

Uses the per-release JSON API, ``GET {base}/pypi/{name}/{version}/json``, whose ``urls``
lists that version's files (``packagetype`` ``bdist_wheel`` / ``sdist``, ``yanked``,
``upload_time_iso_8601``). Fetch and parse into a plain record; no database access. A 404 is
an answer ("not on PyPI"), not an error; 5xx, 429 and timeouts are retried with jittered
backoff; requests to one host go one at a time.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote, urlsplit

import httpx
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from connectors.http import gate_for

DEFAULT_BASE_URL = "https://pypi.org"
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# PEP 508 project names.
_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)

Status = Literal["wheel", "sdist_only", "yanked", "no_files", "not_on_pypi"]


class PyPIError(Exception):
    """A lookup failed for good; ``status`` is None for transport failures."""

    def __init__(self, message: str, *, url: str | None = None, status: int | None = None):
        super().__init__(message)
        self.url = url
        self.status = status


class NotAVersion(PyPIError, ValueError):
    """The tag holds no PEP 440 version, so PyPI cannot have it."""


def normalize_name(name: str) -> str:
    """PEP 503 normal form: ``Flash_Attn`` → ``flash-attn``."""
    if not _NAME.match(name.strip()):
        raise PyPIError(f"{name!r} is not a valid PyPI project name")
    return canonicalize_name(name.strip())


def normalize_version(tag: str, prefix: str = "") -> str:
    """PEP 440 normal form of a release tag: ``v0.31.0`` → ``0.31.0``,
    ``fa4-v4.0.0.beta25`` with prefix ``fa4-v`` → ``4.0.0b25``."""
    text = tag.strip()
    if prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    text = text.removeprefix("v").removeprefix("V")
    try:
        return str(Version(text))
    except InvalidVersion as exc:
        raise NotAVersion(f"tag {tag!r} is not a PEP 440 version") from exc


@dataclass(frozen=True)
class WheelAvailability:
    name: str  # PEP 503 normalised
    version: str  # PEP 440 normalised, as looked up
    on_pypi: bool  # False: PyPI answered 404 for this project/version
    has_wheel: bool  # at least one bdist_wheel that is not yanked
    first_wheel_upload: datetime | None  # earliest upload of such a wheel, aware UTC
    sdist_only: bool  # a non-yanked sdist and no non-yanked wheel
    yanked: bool  # the release has files and every one is yanked
    wheel_count: int  # non-yanked wheels
    url: str  # the release's page on the index

    @property
    def status(self) -> Status:
        if not self.on_pypi:
            return "not_on_pypi"
        if self.has_wheel:
            return "wheel"
        if self.sdist_only:
            return "sdist_only"
        return "yanked" if self.yanked else "no_files"


def _upload_time(item: Mapping[str, Any]) -> datetime | None:
    value = item.get("upload_time_iso_8601") or item.get("upload_time")
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    # The legacy ``upload_time`` has no offset; PyPI records it in UTC.
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def parse_release(name: str, version: str, data: Any, page_url: str) -> WheelAvailability:
    """The availability record of a per-release JSON document."""
    if not isinstance(data, dict) or not isinstance(data.get("urls"), list):
        raise PyPIError(f"{page_url}: release JSON without a 'urls' list", url=page_url)
    release_yanked = bool((data.get("info") or {}).get("yanked"))
    files = [item for item in data["urls"] if isinstance(item, dict)]
    live = [f for f in files if not (f.get("yanked") or release_yanked)]
    wheels = [f for f in live if f.get("packagetype") == "bdist_wheel"]
    uploads = [t for t in (_upload_time(f) for f in wheels) if t is not None]
    return WheelAvailability(
        name=name,
        version=version,
        on_pypi=True,
        has_wheel=bool(wheels),
        first_wheel_upload=min(uploads) if uploads else None,
        sdist_only=not wheels and any(f.get("packagetype") == "sdist" for f in live),
        yanked=bool(files) and not live,
        wheel_count=len(wheels),
        url=page_url,
    )


class PyPIClient:
    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 20.0,
        max_attempts: int = 4,
        backoff_base: float = 1.0,
        max_retry_after: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        user_agent: str = "ai-infra-digest (+pypi)",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.requests = 0
        self.http = httpx.Client(
            headers={"Accept": "application/json", "User-Agent": user_agent},
            timeout=timeout,
            # PyPI answers 301 to the canonical spelling of a project name.
            follow_redirects=True,
        )
        self.gate = gate_for(urlsplit(self.base_url).netloc)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> PyPIClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def release_url(self, name: str, version: str) -> str:
        return f"{self.base_url}/pypi/{quote(name)}/{quote(version)}/json"

    def availability(self, name: str, tag: str, *, prefix: str = "") -> WheelAvailability:
        """Availability of ``tag`` (``v0.31.0``, or a bare version) of project ``name``.

        Raises NotAVersion when the tag holds no PEP 440 version, PyPIError when PyPI keeps
        failing or answers something unusable."""
        project = normalize_name(name)
        version = normalize_version(tag, prefix)
        url = self.release_url(project, version)
        page_url = f"{self.base_url}/project/{project}/{version}/"
        response = self._get(url)
        if response.status_code == 404:
            return WheelAvailability(
                name=project,
                version=version,
                on_pypi=False,
                has_wheel=False,
                first_wheel_upload=None,
                sdist_only=False,
                yanked=False,
                wheel_count=0,
                url=page_url,
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise PyPIError(f"{url}: response is not JSON", url=url) from exc
        return parse_release(project, version, data, page_url)

    def _backoff(self, attempt: int, response: httpx.Response | None) -> float:
        retry_after = response.headers.get("retry-after", "") if response is not None else ""
        if retry_after.isdigit():
            return min(float(retry_after), self.max_retry_after)
        return self.backoff_base * (2**attempt) * (0.5 + self.rng.random())

    def _get(self, url: str) -> httpx.Response:
        """A 2xx or 404 response, after retries; anything else raises PyPIError."""
        problem = ""
        for attempt in range(self.max_attempts):
            response: httpx.Response | None = None
            try:
                with self.gate.lock:
                    self.requests += 1
                    response = self.http.get(url)
            except httpx.TimeoutException as exc:
                problem = f"timeout: {exc}"
            except httpx.HTTPError as exc:
                problem = f"connection error: {exc}"
            else:
                status = response.status_code
                if 200 <= status < 300 or status == 404:
                    return response
                if status not in RETRYABLE_STATUSES:
                    raise PyPIError(f"PyPI answered {status} for {url}", url=url, status=status)
                problem = f"HTTP {status}"
            if attempt + 1 < self.max_attempts:
                self.sleep(self._backoff(attempt, response))
        raise PyPIError(
            f"giving up on {url} after {self.max_attempts} attempts ({problem})", url=url
        )
