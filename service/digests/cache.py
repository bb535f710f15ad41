"""Drafts served from memory while the store stands still.

Two layers, both keyed by the store generations (``service.generations``) read before
anything else in the request:

- a window's *material* (``WindowMaterial``: versions, releases, scored items), keyed by
  the data generation — an editor's curation does not invalidate it, so re-assembling a
  draft after a pin or a move costs no store read;
- the *body* of a response (JSON or Markdown bytes), keyed by both generations and the
  request's options, with an ETag so that a client holding the current one gets a 304.

Each process keeps its own bounded cache; nothing is shared between API workers, and a
generation that moves in any of them (every write bumps it in the database) retires the
entries of all of them.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, Generic, TypeVar

from sqlalchemy.orm import Session

from service.digests.service import (
    WindowMaterial,
    build_draft,
    collector_paused,
    window_material,
)
from service.generations.service import Generation, Generations
from service.themes import Taxonomy
from service.windows import Window

Value = TypeVar("Value")


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the service's code and templates: an ETag made by other code (an older
    deployment, another version) never matches one made by this code."""
    digest = hashlib.sha256()

    def walk(folder: Traversable) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                walk(entry)
            elif entry.name.endswith((".py", ".j2", ".html", ".toml")):
                digest.update(entry.name.encode())
                digest.update(entry.read_bytes())

    walk(resources.files("service"))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class MaterialKey:
    data: Generation
    window: Window
    repo_key: str | None
    taxonomy_version: str


@dataclass(frozen=True)
class BodyKey:
    material: MaterialKey
    curation: Generation
    include_all: bool
    model: str | None
    format: str
    lang: str

    @property
    def etag(self) -> str:
        parts = (code_digest(), repr(self))
        return '"' + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32] + '"'


def material_key(
    generations: Generations, window: Window, repo_key: str | None, taxonomy: Taxonomy
) -> MaterialKey:
    return MaterialKey(generations.data, window, repo_key, taxonomy.version)


class _Bounded(Generic[Value]):
    """Least recently used first out, once the entries weigh more than ``limit``."""

    def __init__(self, limit: int, weigh: Callable[[Value], int]) -> None:
        self.limit = limit
        self.weigh = weigh
        self.weight = 0
        self.entries: OrderedDict[object, Value] = OrderedDict()

    def get(self, key: object) -> Value | None:
        value = self.entries.get(key)
        if value is not None:
            self.entries.move_to_end(key)
        return value

    def put(self, key: object, value: Value) -> None:
        weight = self.weigh(value)
        if weight > self.limit:
            return  # would evict everything else and still not fit
        old = self.entries.pop(key, None)
        if old is not None:
            self.weight -= self.weigh(old)
        self.entries[key] = value
        self.weight += weight
        while self.weight > self.limit:
            _, evicted = self.entries.popitem(last=False)
            self.weight -= self.weigh(evicted)


class DraftCache:
    """Thread-safe; concurrent requests for an entry being built wait for that build
    instead of starting their own."""

    def __init__(
        self,
        *,
        max_materials: int = 8,
        max_body_bytes: int = 256 * 1024 * 1024,
        on_lookup: Callable[[str, bool], None] | None = None,
    ) -> None:
        self._materials: _Bounded[WindowMaterial] = _Bounded(max_materials, lambda _: 1)
        self._bodies: _Bounded[bytes] = _Bounded(max_body_bytes, len)
        self._lock = threading.Lock()
        self._building: dict[object, threading.Lock] = {}
        self._on_lookup = on_lookup or (lambda layer, hit: None)

    def material(self, key: MaterialKey, build: Callable[[], WindowMaterial]) -> WindowMaterial:
        return self._get_or_build("material", self._materials, key, build)

    def body(self, key: BodyKey, build: Callable[[], bytes]) -> bytes:
        return self._get_or_build("body", self._bodies, key, build)

    def _get_or_build(
        self, layer: str, store: _Bounded[Value], key: object, build: Callable[[], Value]
    ) -> Value:
        with self._lock:
            found = store.get(key)
            if found is None:
                building = self._building.setdefault((layer, key), threading.Lock())
        if found is not None:
            self._on_lookup(layer, True)
            return found
        with building:
            with self._lock:
                found = store.get(key)
            if found is not None:  # built meanwhile by the request we waited for
                self._on_lookup(layer, True)
                return found
            self._on_lookup(layer, False)
            try:
                value = build()
                with self._lock:
                    store.put(key, value)
            finally:
                with self._lock:
                    self._building.pop((layer, key), None)
            return value


def cached_draft(
    cache: DraftCache,
    session: Session,
    generations: Generations,
    window: Window,
    *,
    taxonomy: Taxonomy,
    repo_key: str | None = None,
    include_all: bool = False,
    model: str | None = None,
    curated: bool = True,
) -> dict[str, Any]:
    """``build_draft`` over the window's material from the cache, or read from the store
    (``generations`` must have been read before anything else of the request)."""

    def build() -> WindowMaterial:
        with collector_paused():
            return window_material(session, window, repo_key=repo_key, taxonomy=taxonomy)

    material = cache.material(material_key(generations, window, repo_key, taxonomy), build)
    return build_draft(
        session,
        window,
        include_all=include_all,
        model=model,
        taxonomy=taxonomy,
        curated=curated,
        material=material,
    )
