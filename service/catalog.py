"""The catalog of tracked projects and blogs (``service/data/catalog.toml``, DESIGN §7).

Parsed and validated into frozen records; no database access. Every error names the entry
it is about, so an editor's copy of the file can be fixed from the message alone.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name

from service.errors import InvalidInput
from service.projects.service import ProjectSpec, validate_slug

DEFAULT_CATALOG = Path(__file__).parent / "data" / "catalog.toml"
CATEGORIES = frozenset(
    {"inference", "kernels", "model-library", "training", "image-video", "multimodal"}
)
_PROJECT_KEYS = frozenset(
    {
        "repo",
        "name",
        "category",
        "pypi",
        "default_branch",
        "tag_pattern",
        "nightly_releases",
        "tags_only",
        "lines",
    }
)
_LINE_KEYS = frozenset({"name", "tag_pattern", "tag_prefix", "pypi"})
_BLOG_KEYS = frozenset({"key", "name", "url", "site", "projects"})


class CatalogError(InvalidInput):
    pass


@dataclass(frozen=True)
class VersionLine:
    """Tags of one version line of a repository and the PyPI projects that ship it."""

    name: str
    tag_pattern: str  # fnmatch glob, e.g. "fa4-v*"
    tag_prefix: str  # split off before PEP 440 parsing, e.g. "fa4-v"
    pypi: tuple[str, ...]

    def matches(self, tag: str) -> bool:
        return fnmatch.fnmatchcase(tag, self.tag_pattern)


@dataclass(frozen=True)
class CatalogProject:
    repo: str
    name: str
    category: str
    lines: tuple[VersionLine, ...]  # at least one; the first whose pattern matches applies
    default_branch: str | None
    nightly_releases: bool
    tags_only: bool

    @property
    def pypi(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for line in self.lines for name in line.pypi))

    def line_for(self, tag: str) -> VersionLine | None:
        """The version line a tag belongs to; None when it is no release of the project."""
        return next((line for line in self.lines if line.matches(tag)), None)


@dataclass(frozen=True)
class CatalogBlog:
    key: str
    name: str
    url: str  # the feed
    site: str | None
    projects: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    projects: tuple[CatalogProject, ...]
    blogs: tuple[CatalogBlog, ...]

    def project(self, repo: str) -> CatalogProject | None:
        key = repo.strip().lower()
        return next((p for p in self.projects if p.repo.lower() == key), None)

    def blog(self, key: str) -> CatalogBlog | None:
        return next((b for b in self.blogs if b.key == key), None)

    def project_specs(self) -> list[ProjectSpec]:
        """The projects as the store adds them (``service.projects.service.add``)."""
        return [ProjectSpec(repo=p.repo, name=p.name, category=p.category) for p in self.projects]


def load_catalog(path: Path | None = None) -> Catalog:
    """Read the catalog file (the packaged default when ``path`` is None)."""
    source = path or DEFAULT_CATALOG
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"cannot read catalog {source}: {exc}") from exc
    return parse_catalog(text, str(source))


def parse_catalog(text: str, source: str = "catalog") -> Catalog:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{source}: not valid TOML: {exc}") from exc
    unknown = set(data) - {"projects", "blogs"}
    if unknown:
        raise CatalogError(f"{source}: unknown top-level keys {sorted(unknown)}")
    raw_projects = data.get("projects")
    if not isinstance(raw_projects, list) or not raw_projects:
        raise CatalogError(f"{source}: needs a non-empty [[projects]] list")
    projects: list[CatalogProject] = []
    seen: dict[str, str] = {}
    for index, raw in enumerate(raw_projects, start=1):
        project = _project(raw, f"{source}: project {index}")
        if project.repo.lower() in seen:
            raise CatalogError(f"{source}: project {index} ({project.repo}) is listed twice")
        seen[project.repo.lower()] = project.repo
        projects.append(project)
    raw_blogs = data.get("blogs", [])
    if not isinstance(raw_blogs, list):
        raise CatalogError(f"{source}: 'blogs' must be a [[blogs]] list")
    blogs: list[CatalogBlog] = []
    for index, raw in enumerate(raw_blogs, start=1):
        blog = _blog(raw, f"{source}: blog {index}", seen)
        if any(b.key == blog.key for b in blogs):
            raise CatalogError(f"{source}: blog {index} ({blog.key}) is listed twice")
        blogs.append(blog)
    return Catalog(projects=tuple(projects), blogs=tuple(blogs))


def _table(raw: Any, where: str, allowed: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: expected a table")
    unknown = set(raw) - allowed
    if unknown:
        raise CatalogError(f"{where}: unknown keys {sorted(unknown)}")
    return raw


def _string(raw: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{where}: '{key}' must be a non-empty string")
    return value.strip()


def _flag(raw: Mapping[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise CatalogError(f"{where}: '{key}' must be true or false")
    return value


def _pypi_names(raw: Mapping[str, Any], where: str) -> tuple[str, ...]:
    value = raw.get("pypi", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise CatalogError(f"{where}: 'pypi' must be a list of PyPI project names")
    return tuple(dict.fromkeys(canonicalize_name(v.strip()) for v in value))


def _line(raw: Any, where: str) -> VersionLine:
    table = _table(raw, where, _LINE_KEYS)
    name = _string(table, "name", where)
    pattern = _string(table, "tag_pattern", where)
    prefix = table.get("tag_prefix", "")
    if not isinstance(prefix, str):
        raise CatalogError(f"{where}: 'tag_prefix' must be a string")
    assert name is not None and pattern is not None
    return VersionLine(name, pattern, prefix, _pypi_names(table, where))


def _project(raw: Any, where: str) -> CatalogProject:
    if isinstance(raw, dict) and isinstance(raw.get("repo"), str):
        where = f"{where} ({raw['repo']})"
    table = _table(raw, where, _PROJECT_KEYS)
    repo = _string(table, "repo", where)
    assert repo is not None
    try:
        repo = validate_slug(repo)
    except InvalidInput as exc:
        raise CatalogError(f"{where}: {exc.message}") from exc
    name = _string(table, "name", where)
    category = _string(table, "category", where)
    assert name is not None and category is not None
    if category not in CATEGORIES:
        raise CatalogError(
            f"{where}: category {category!r} is not one of {', '.join(sorted(CATEGORIES))}"
        )
    raw_lines = table.get("lines")
    if raw_lines is not None:
        if not isinstance(raw_lines, list) or not raw_lines:
            raise CatalogError(f"{where}: 'lines' must be a non-empty [[projects.lines]] list")
        if "pypi" in table or "tag_pattern" in table:
            raise CatalogError(
                f"{where}: with [[projects.lines]], give 'pypi' and 'tag_pattern' per line"
            )
        lines = tuple(_line(r, f"{where} line {i}") for i, r in enumerate(raw_lines, start=1))
    else:
        pattern = _string(table, "tag_pattern", where, required=False) or "*"
        lines = (VersionLine(name, pattern, "", _pypi_names(table, where)),)
    return CatalogProject(
        repo=repo,
        name=name,
        category=category,
        lines=lines,
        default_branch=_string(table, "default_branch", where, required=False),
        nightly_releases=_flag(table, "nightly_releases", where),
        tags_only=_flag(table, "tags_only", where),
    )


def _http_url(raw: Mapping[str, Any], key: str, where: str, *, required: bool) -> str | None:
    url = _string(raw, key, where, required=required)
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise CatalogError(f"{where}: '{key}' must be an http(s) URL, got {url!r}")
    return url


def _blog(raw: Any, where: str, repos: Mapping[str, str]) -> CatalogBlog:
    if isinstance(raw, dict) and isinstance(raw.get("key"), str):
        where = f"{where} ({raw['key']})"
    table = _table(raw, where, _BLOG_KEYS)
    key = _string(table, "key", where)
    name = _string(table, "name", where)
    url = _http_url(table, "url", where, required=True)
    assert key is not None and name is not None and url is not None
    listed = table.get("projects", [])
    if not isinstance(listed, list) or not all(isinstance(r, str) for r in listed):
        raise CatalogError(f"{where}: 'projects' must be a list of repository slugs")
    projects: list[str] = []
    for repo in listed:
        canonical = repos.get(repo.strip().lower())
        if canonical is None:
            raise CatalogError(f"{where}: project {repo!r} is not in the catalog")
        projects.append(canonical)
    return CatalogBlog(
        key=key,
        name=name,
        url=url,
        site=_http_url(table, "site", where, required=False),
        projects=tuple(projects),
    )


def options_of(project: CatalogProject) -> dict[str, Any]:
    """A project's catalog options as the store keeps them (``Project.options``)."""
    return {
        "lines": [
            {
                "name": line.name,
                "tag_pattern": line.tag_pattern,
                "tag_prefix": line.tag_prefix,
                "pypi": list(line.pypi),
            }
            for line in project.lines
        ],
        "default_branch": project.default_branch,
        "nightly_releases": project.nightly_releases,
        "tags_only": project.tags_only,
    }


def from_options(
    repo: str, name: str, category: str | None, options: Mapping[str, Any] | None
) -> CatalogProject:
    """The catalog view of a stored project; a project added without options takes every
    tag as a release of one version line and publishes nothing on PyPI."""
    options = options or {}
    lines = tuple(
        VersionLine(
            str(line.get("name") or name),
            str(line.get("tag_pattern") or "*"),
            str(line.get("tag_prefix") or ""),
            tuple(line.get("pypi") or ()),
        )
        for line in options.get("lines") or ()
    ) or (VersionLine(name, "*", "", ()),)
    return CatalogProject(
        repo=repo,
        name=name,
        category=category or "inference",
        lines=lines,
        default_branch=options.get("default_branch"),
        nightly_releases=bool(options.get("nightly_releases", True)),
        tags_only=bool(options.get("tags_only", False)),
    )
