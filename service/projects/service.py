"""Queries and changes of tracked projects."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.errors import ConflictError, InvalidInput, NotFoundError
from service.projects.models import Project

REPO_SLUG = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


@dataclass(frozen=True)
class ProjectSpec:
    repo: str
    name: str | None = None
    category: str | None = None


def validate_slug(repo: str) -> str:
    repo = repo.strip()
    owner_and_name = repo.split("/")
    if (
        not REPO_SLUG.match(repo)
        or owner_and_name[1] in (".", "..")
        or owner_and_name[1].endswith(".git")
    ):
        raise InvalidInput(
            f"{repo!r} is not a GitHub repository slug; expected 'owner/name', "
            "e.g. 'vllm-project/vllm'"
        )
    return repo


def find(session: Session, repo: str) -> Project | None:
    key = validate_slug(repo).lower()
    return session.scalar(select(Project).where(Project.repo_key == key))


def get(session: Session, repo: str) -> Project:
    project = find(session, repo)
    if project is None:
        raise NotFoundError(f"repository {repo!r} is not tracked")
    return project


def list_all(session: Session) -> list[Project]:
    return list(session.scalars(select(Project).order_by(Project.repo_key)))


def add(session: Session, spec: ProjectSpec, *, exist_ok: bool = False) -> Project:
    repo = validate_slug(spec.repo)
    existing = find(session, repo)
    if existing is not None:
        if exist_ok:
            return existing
        raise ConflictError(f"repository {repo!r} is already tracked")
    project = Project(
        repo=repo,
        repo_key=repo.lower(),
        name=spec.name or repo.split("/")[1],
        category=spec.category,
    )
    session.add(project)
    session.flush()
    return project


def remove(session: Session, repo: str) -> None:
    session.delete(get(session, repo))
    session.flush()


def load_projects_file(path: Path) -> list[ProjectSpec]:
    """Read a TOML projects file: ``[[projects]]`` tables with ``repo``, ``name``, ``category``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"cannot read projects file {path}: {exc}") from exc
    entries = data.get("projects")
    if not isinstance(entries, list):
        raise InvalidInput(f"projects file {path} has no [[projects]] list")
    specs: list[ProjectSpec] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("repo"), str):
            raise InvalidInput(f"projects file {path}: entry {index + 1} needs a 'repo' string")
        specs.append(
            ProjectSpec(
                repo=validate_slug(entry["repo"]),
                name=entry.get("name"),
                category=entry.get("category"),
            )
        )
    return specs
