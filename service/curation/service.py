"""Curation actions and the state they add up to, applied to a draft."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.curation.models import CurationAction
from service.errors import InvalidInput, NotFoundError, UnprocessableInput
from service.windows import Window, iso_utc

PINNED_THEME = {"key": "pinned", "title": "Pinned", "title_zh": "置顶"}
MAX_TEXT = 2000


class Action(enum.StrEnum):
    EXCLUDE = "exclude"
    RESTORE = "restore"
    PIN = "pin"
    UNPIN = "unpin"
    MOVE = "move"  # value: {"theme": key}
    RETITLE = "retitle"  # value: {"title": text} (empty resets)
    NOTE = "note"  # value: {"text": text} (empty clears)
    ADD = "add"  # value: {"title", "url", "theme", "note"?, "project"?}
    REMOVE = "remove"  # a manual item


def pull_request_key(repo: str, number: int) -> str:
    return f"pr:{repo.lower()}#{number}"


def release_key(repo: str, tag: str) -> str:
    return f"release:{repo.lower()}@{tag}"


@dataclass
class ItemState:
    excluded: bool = False
    pinned: bool = False
    theme: str | None = None
    title: str | None = None
    note: str | None = None


@dataclass
class CurationState:
    items: dict[str, ItemState] = field(default_factory=dict)
    manual: dict[str, dict[str, Any]] = field(default_factory=dict)

    def of(self, key: str) -> ItemState:
        return self.items.setdefault(key, ItemState())


def _text(value: dict[str, Any] | None, name: str, *, required: bool) -> str | None:
    raw = (value or {}).get(name)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if required:
            raise UnprocessableInput(f"{name}: required for this action")
        return None
    if not isinstance(raw, str):
        raise UnprocessableInput(f"{name}: must be text")
    if len(raw) > MAX_TEXT:
        raise UnprocessableInput(f"{name}: at most {MAX_TEXT} characters")
    return raw.strip()


def validate(
    action: Action, item_key: str | None, value: dict[str, Any] | None, theme_keys: set[str]
) -> tuple[str, dict[str, Any] | None]:
    """The item key and value to store for an action, or a clear 4xx."""
    if action is Action.ADD:
        title = _text(value, "title", required=True)
        url = _text(value, "url", required=True)
        assert url is not None
        if not url.startswith(("http://", "https://")):
            raise UnprocessableInput("url: a manual item needs an http(s) link")
        theme = _text(value, "theme", required=False) or "other"
        if theme not in theme_keys:
            raise UnprocessableInput(f"theme: {theme!r} is not a theme of the taxonomy")
        stored = {
            "title": title,
            "url": url,
            "theme": theme,
            "note": _text(value, "note", required=False),
            "project": _text(value, "project", required=False),
        }
        return f"manual:{uuid.uuid4().hex[:12]}", stored
    if not item_key:
        raise InvalidInput("item: give the key of the item (e.g. 'pr:vllm-project/vllm#123')")
    if not item_key.startswith(("pr:", "release:", "manual:")) or len(item_key) > 300:
        raise InvalidInput(f"item: {item_key!r} is not an item key")
    if action is Action.MOVE:
        theme = _text(value, "theme", required=True)
        if theme not in theme_keys:
            raise UnprocessableInput(f"theme: {theme!r} is not a theme of the taxonomy")
        return item_key, {"theme": theme}
    if action is Action.RETITLE:
        return item_key, {"title": _text(value, "title", required=False)}
    if action is Action.NOTE:
        return item_key, {"text": _text(value, "text", required=False)}
    if action is Action.REMOVE and not item_key.startswith("manual:"):
        raise UnprocessableInput("remove: only manual items can be removed; exclude the others")
    return item_key, None


def record(
    session: Session,
    window: Window,
    action: Action,
    item_key: str | None,
    value: dict[str, Any] | None,
    actor: str,
    theme_keys: set[str],
) -> CurationAction:
    key, stored = validate(action, item_key, value, theme_keys)
    if key.startswith("manual:") and action is not Action.ADD:
        state = load(session, window)
        if key not in state.manual:
            raise NotFoundError(f"manual item {key!r} does not exist in this window")
    entry = CurationAction(
        window_start=window.first_day,
        window_end=window.last_day,
        item_key=key,
        action=action.value,
        value=stored,
        actor=actor,
    )
    session.add(entry)
    session.flush()
    return entry


def history(session: Session, window: Window) -> list[CurationAction]:
    return list(
        session.scalars(
            select(CurationAction)
            .where(
                CurationAction.window_start == window.first_day,
                CurationAction.window_end == window.last_day,
            )
            .order_by(CurationAction.id)
        )
    )


def fold(actions: list[CurationAction]) -> CurationState:
    state = CurationState()
    for entry in actions:
        key, value = entry.item_key, entry.value or {}
        action = Action(entry.action)
        if action is Action.ADD:
            state.manual[key] = {
                **value,
                "added_by": entry.actor,
                "added_at": iso_utc(entry.created_at),
            }
            continue
        if action is Action.REMOVE:
            state.manual.pop(key, None)
            continue
        item = state.of(key)
        if action is Action.EXCLUDE:
            item.excluded = True
        elif action is Action.RESTORE:
            item.excluded = False
        elif action is Action.PIN:
            item.pinned = True
        elif action is Action.UNPIN:
            item.pinned = False
        elif action is Action.MOVE:
            item.theme = value.get("theme")
        elif action is Action.RETITLE:
            item.title = value.get("title")
        elif action is Action.NOTE:
            item.note = value.get("text")
    return state


def load(session: Session, window: Window) -> CurationState:
    return fold(history(session, window))


def action_json(entry: CurationAction) -> dict[str, Any]:
    return {
        "id": entry.id,
        "window": {"start": entry.window_start.isoformat(), "end": entry.window_end.isoformat()},
        "item": entry.item_key,
        "action": entry.action,
        "value": entry.value,
        "actor": entry.actor,
        "at": iso_utc(entry.created_at),
    }


def manual_item(key: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "manual",
        "key": key,
        "repo": None,
        "project": entry.get("project"),
        "number": None,
        "title": entry["title"],
        "url": entry["url"],
        "merged_at": None,
        "first_release": None,
        "first_stable_release": None,
        "timing": None,
        "themes": [entry["theme"]],
        "primary_theme": entry["theme"],
        "models": [],
        "noise": None,
        "breaking": False,
        "claims": [],
        "score": 0.0,
        "reasons": [f"added by {entry['added_by']}"],
        "previously_reported": None,
        "sources": [entry["url"]],
        "editor_note": entry.get("note"),
        "pinned": False,
    }


def apply(
    items: list[dict[str, Any]], state: CurationState
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The items as curated (manual ones added) and the excluded ones, each annotated;
    ``items`` themselves are left as they are."""
    kept: list[dict[str, Any]] = []
    excluded: list[dict[str, Any]] = []
    for key, entry in state.manual.items():
        items = [*items, manual_item(key, entry)]
    for item in items:
        item_state = state.items.get(item["key"])
        if item_state is not None:
            # the items are shared (a window's material serves many drafts): change a copy
            item = {"pinned": False, "editor_note": None, **item}
            if item_state.title:
                item["original_title"] = item["title"]
                item["title"] = item_state.title
            if item_state.theme:
                item["primary_theme"] = item_state.theme
                item["moved"] = True
            item["editor_note"] = item_state.note or item.get("editor_note")
            item["pinned"] = item_state.pinned
            if item_state.excluded:
                excluded.append(item)
                continue
        kept.append(item)
    return kept, excluded


def window_days(window: Window) -> tuple[date, date]:
    return window.first_day, window.last_day
