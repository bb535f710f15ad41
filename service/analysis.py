"""What a change is, worked out once when it is stored: themes, model families, noise,
whether it breaks anything, the numbers it reports, and the window-independent part of its
score (R6–R9).

Each stored analysis carries the version that produced it: a digest of the taxonomy files
and of the classifier's own code. A change whose version differs from the running one is
analysed again on the fly by the draft and rewritten by ``refresh_stale`` (the worker runs
it in batches; ``digest reanalyze`` runs it to the end), so editing the taxonomy or the
classifier never leaves a draft built on old results.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import orjson
from sqlalchemy import bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from service.breaking import change_is_breaking, release_breaking_changes
from service.changes.models import Change
from service.claims import change_claims, claims_in
from service.projects.models import Project
from service.releases.models import Release
from service.significance import score_change
from service.themes import OTHER, Taxonomy, classify

log = logging.getLogger(__name__)

# the modules whose code decides what an analysis holds
_CLASSIFIER_MODULES = ("analysis.py", "themes.py", "breaking.py", "claims.py", "significance.py")


@lru_cache(maxsize=1)
def _code_digest() -> str:
    package = resources.files("service")
    sources = b"".join(package.joinpath(name).read_bytes() for name in _CLASSIFIER_MODULES)
    return hashlib.sha256(sources).hexdigest()[:12]


def analysis_version(taxonomy: Taxonomy) -> str:
    return f"{_code_digest()}.{taxonomy.version}"


@dataclass(frozen=True)
class ChangeAnalysis:
    themes: tuple[str, ...]  # primary first
    models: tuple[str, ...]
    noise: str | None
    breaking: bool
    claims: tuple[dict[str, Any], ...]
    score: float  # without the window's part (``significance.with_timing``)
    reasons: tuple[str, ...]

    @property
    def primary(self) -> str:
        return self.themes[0] if self.themes else OTHER

    def columns(self, version: str) -> dict[str, Any]:
        """The change table's columns that hold this analysis."""
        payload = {
            "themes": self.themes,
            "models": self.models,
            "claims": self.claims,
            "score": self.score,
            "reasons": self.reasons,
        }
        return {
            "analysis": orjson.dumps(payload).decode(),
            "analysis_version": version,
            "noise": self.noise,
            "breaking": self.breaking,
        }

    @classmethod
    def from_columns(cls, analysis: str, noise: str | None, breaking: bool) -> ChangeAnalysis:
        payload = orjson.loads(analysis)
        return cls(
            themes=tuple(payload["themes"]),
            models=tuple(payload["models"]),
            noise=noise,
            breaking=breaking,
            claims=tuple(payload["claims"]),
            score=payload["score"],
            reasons=tuple(payload["reasons"]),
        )


ANALYSIS_COLUMNS = ["analysis", "analysis_version", "noise", "breaking"]
RELEASE_ANALYSIS_COLUMNS = ["analysis", "analysis_version"]


@dataclass(frozen=True)
class ReleaseAnalysis:
    breaking_changes: tuple[str, ...]  # one upgrade-check line each
    claims: tuple[dict[str, Any], ...]

    def columns(self, version: str) -> dict[str, Any]:
        payload = {"breaking_changes": self.breaking_changes, "claims": self.claims}
        return {"analysis": orjson.dumps(payload).decode(), "analysis_version": version}

    @classmethod
    def from_column(cls, analysis: str) -> ReleaseAnalysis:
        payload = orjson.loads(analysis)
        return cls(tuple(payload["breaking_changes"]), tuple(payload["claims"]))


def analyze_release(body: str | None) -> ReleaseAnalysis:
    return ReleaseAnalysis(
        breaking_changes=tuple(release_breaking_changes(body or "")),
        claims=tuple(c.as_json() for c in claims_in(body or "", "release_notes")),
    )


def release_analysis_columns(row: dict[str, Any], taxonomy: Taxonomy) -> dict[str, Any]:
    """The analysis columns of a release row about to be stored (its notes)."""
    return analyze_release(row.get("body")).columns(analysis_version(taxonomy))


def release_analysis(release: Release, taxonomy: Taxonomy) -> ReleaseAnalysis:
    """A release's stored analysis, or one made now if it is of another version."""
    if release.analysis is not None and not is_stale(release.analysis_version, taxonomy):
        return ReleaseAnalysis.from_column(release.analysis)
    return analyze_release(release.body)


def analyze_change(
    title: str, labels: Sequence[str], body: str, category: str | None, taxonomy: Taxonomy
) -> ChangeAnalysis:
    labels = list(labels or [])
    body = body or ""
    breaking = change_is_breaking(title, labels, body)
    classification = classify(title, labels, category, breaking=breaking, taxonomy=taxonomy)
    claims = change_claims(title, body)
    score, reasons = score_change(
        classification,
        breaking=breaking,
        claims=claims,
        labels=labels,
        body=body,
        taxonomy=taxonomy,
    )
    return ChangeAnalysis(
        themes=classification.themes,
        models=classification.models,
        noise=classification.noise,
        breaking=breaking,
        claims=tuple(c.as_json() for c in claims),
        score=score,
        reasons=tuple(reasons),
    )


def analysis_columns(
    row: dict[str, Any], category: str | None, taxonomy: Taxonomy
) -> dict[str, Any]:
    """The analysis columns of a change row about to be stored (title, labels and body)."""
    analysis = analyze_change(row["title"], row["labels"], row["body"], category, taxonomy)
    return analysis.columns(analysis_version(taxonomy))


def is_stale(version: str | None, taxonomy: Taxonomy) -> bool:
    return version != analysis_version(taxonomy)


def _stale(column: Any, version: str) -> Any:
    # two ranges and NULL, so the version index serves it (``!=`` would scan the table)
    return or_(column.is_(None), column < version, column > version)


def count_stale(session: Session, taxonomy: Taxonomy) -> int:
    """Changes and releases stored under another analysis version."""
    version = analysis_version(taxonomy)
    return sum(
        session.scalar(
            select(func.count()).select_from(model).where(_stale(model.analysis_version, version))
        )
        or 0
        for model in (Change, Release)
    )


def refresh_stale(session: Session, taxonomy: Taxonomy, limit: int = 1000) -> int:
    """Analyse again up to ``limit`` releases or changes stored under another version;
    returns how many (0: none is left).

    Idempotent: two workers refreshing at once write the same values."""
    version = analysis_version(taxonomy)
    releases = session.execute(
        select(Release.id, Release.body)
        .where(_stale(Release.analysis_version, version))
        .order_by(Release.id)
        .limit(limit)
    ).all()
    if releases:
        values = [
            {"row_id": row.id, **analyze_release(row.body).columns(version)} for row in releases
        ]
        _write(session, Release, values, RELEASE_ANALYSIS_COLUMNS)
        return len(releases)
    rows = session.execute(
        select(Change.id, Change.title, Change.labels, Change.body, Project.category)
        .join(Project, Project.id == Change.project_id)
        .where(_stale(Change.analysis_version, version))
        .order_by(Change.id)
        .limit(limit)
    ).all()
    values = [
        {
            "row_id": row.id,
            **analysis_columns(
                {"title": row.title, "labels": row.labels, "body": row.body},
                row.category,
                taxonomy,
            ),
        }
        for row in rows
    ]
    _write(session, Change, values, ANALYSIS_COLUMNS)
    return len(rows)


def _write(session: Session, model: Any, values: list[dict[str, Any]], columns: list[str]) -> None:
    if not values:
        return
    table = model.__table__
    session.execute(
        update(table)
        .where(table.c.id == bindparam("row_id"))
        .values({name: bindparam(name) for name in columns}),
        values,
    )


def mark_project_stale(session: Session, project_id: int) -> None:
    """A project's category feeds its changes' themes: changing it re-analyses them."""
    session.execute(
        update(Change).where(Change.project_id == project_id).values(analysis_version=None)
    )
