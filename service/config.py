"""Settings, read from the environment (prefix ``DIGEST_``; the token from ``GITHUB_TOKEN``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

UNAUTHENTICATED_REQUESTS_PER_HOUR = 60


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DIGEST_", extra="ignore", populate_by_name=True)

    data_dir: Path = Path("data")
    database_url: str = ""
    github_api_url: str = "https://api.github.com"
    github_web_url: str = "https://github.com"
    github_token: str | None = Field(
        default=None, validation_alias=AliasChoices("GITHUB_TOKEN", "DIGEST_GITHUB_TOKEN")
    )
    poll_interval: int = Field(default=900, ge=10, description="seconds between polls of a project")
    poll_jitter: int = Field(default=60, ge=0)
    projects_file: Path | None = None
    themes_file: Path | None = Field(
        default=None, description="an editor's copy of the theme taxonomy (TOML)"
    )
    models_file: Path | None = Field(default=None, description="model families (TOML)")
    backfill_days: int = Field(
        default=120, ge=1, description="how far back the first sync of a project reaches"
    )
    pull_overlap_seconds: int = Field(default=3600, ge=0)
    http_timeout: float = 30.0
    http_max_attempts: int = 6
    max_rate_limit_wait: float = Field(
        default=900.0, description="longest wait for a rate-limit reset inside one sync"
    )
    event_lookback_hours: float = Field(
        default=24.0,
        ge=0,
        description="releases/merges this long before a project was added still give events",
    )
    webhook_allowed_hosts: str = Field(
        default="", description="comma-separated hosts exempt from the private-address refusal"
    )
    webhook_timeout: float = Field(default=15.0, gt=0)
    webhook_retry_base_seconds: float = Field(default=5.0, gt=0)
    webhook_retry_max_delay_seconds: float = Field(default=6 * 3600.0, gt=0)
    webhook_retry_hours: float = Field(default=72.0, ge=24)
    webhook_disable_after_hours: float = Field(default=72.0, gt=0)
    webhook_poll_seconds: float = Field(
        default=2.0, gt=0, description="fallback poll for events committed by other processes"
    )
    webhook_concurrency: int = Field(default=8, ge=1)
    pypi_url: str = Field(default="https://pypi.org", description="PyPI (or a mirror)")
    atom_gate: bool = Field(
        default=True,
        description="check github.com's releases.atom (no API quota) before the releases API",
    )
    tokenless_pull_interval: int = Field(
        default=3600, ge=60, description="without a token, poll pull requests this often"
    )
    max_tag_lookups: int = Field(
        default=50, ge=1, description="tag dates resolved per pass for tag-only projects"
    )
    lease_seconds: int = Field(
        default=120, ge=5, description="a worker killed mid-sync loses its leases after this"
    )
    reads_need_token: bool = Field(
        default=False, description="whether GET routes need a reader (or higher) token"
    )
    public_url: str = Field(
        default="http://127.0.0.1:8000", description="the service's own address, for feed links"
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="json: one JSON object per log line, with request ids"
    )
    readiness_timeout: float = Field(
        default=3.0, gt=0, description="longest wait of /readyz for the database"
    )
    metrics_port: int | None = Field(
        default=None, description="`digest worker` serves /metrics on this port when set"
    )
    draft_cache_windows: int = Field(
        default=8, ge=0, description="drafts' window material kept in memory per API process"
    )
    draft_cache_mb: int = Field(
        default=256, ge=0, description="rendered draft bodies kept in memory per API process"
    )
    host: str = "127.0.0.1"
    port: int = 8000

    @field_validator("github_api_url", "github_web_url", "pypi_url")
    @classmethod
    def _strip_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("github_token")
    @classmethod
    def _empty_token_is_none(cls, value: str | None) -> str | None:
        return value or None

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'digest.sqlite3').resolve()}"

    def token_warning(self, tracked_projects: int) -> str | None:
        """What running without a token means, or None when a token is set."""
        if self.github_token:
            return None
        per_hour = 3600 / self.tokenless_pull_interval
        idle = tracked_projects * per_hour
        affordable = int(UNAUTHENTICATED_REQUESTS_PER_HOUR / per_hour)
        return (
            "GITHUB_TOKEN is not set: GitHub allows 60 unauthenticated API requests per hour, "
            "and without a token every request counts, 304s included. Release changes are "
            "detected through github.com's releases.atom, which costs none; pull requests are "
            f"polled every {self.tokenless_pull_interval}s per project, so at most "
            f"{affordable} project(s) fit when idle ({tracked_projects} tracked need about "
            f"{idle:.0f} requests/hour), and a first backfill needs many more. Set "
            "GITHUB_TOKEN (5,000 requests/hour)."
        )


@lru_cache
def get_settings() -> Settings:
    return Settings()
