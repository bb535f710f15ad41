"""Render a draft digest as Markdown (Jinja2 templates beside this module)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

_environment = Environment(
    loader=PackageLoader("service.digests", "templates"),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)


def _day(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d")


def timing_text(item: dict[str, Any]) -> str:
    merged = _day(item["merged_at"])
    first = item["first_release"]
    stable = item["first_stable_release"]
    shipped = " ".join(
        f"in {ref['tag']} ({_day(ref['published_at'])})" for ref in (first, stable) if ref
    )
    if item["timing"] == "merged_unreleased":
        return f"merged {merged}, not yet in a release"
    if item["timing"] == "merged_and_released":
        return f"merged {merged}, shipped {shipped}"
    return f"merged earlier ({merged}), shipped this week {shipped}"


def render_markdown(draft: dict[str, Any]) -> str:
    sources: list[str] = [r["url"] for r in draft["releases"] if r["url"]]
    for theme in draft["themes"]:
        sources.extend(item["url"] for item in theme["items"] if item["url"])
    unique = list(dict.fromkeys(sources))
    numbers = {url: index + 1 for index, url in enumerate(unique)}
    window = draft["window"]
    last_day = datetime.fromisoformat(window["end"])
    return _environment.get_template("draft.md.j2").render(
        draft=draft,
        first_day=_day(window["start"]),
        last_day=(last_day.fromordinal(last_day.toordinal() - 1)).strftime("%Y-%m-%d"),
        sources=unique,
        source_numbers=numbers,
        timing_text=timing_text,
    )
