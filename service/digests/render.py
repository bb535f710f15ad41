"""Render a draft digest as Markdown, in Chinese (default) or English, from Jinja2 templates.

Sources are numbered in order of first mention, in the style of seed 004 (``[1] URL``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from service.errors import InvalidInput
from service.themes import Taxonomy, default_taxonomy

LANGUAGES = ("zh", "en")

_environment = Environment(
    loader=PackageLoader("service.digests", "templates"),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)


def _moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


class Wording:
    """Dates, release status and R3 timing, in one language."""

    def __init__(self, lang: str) -> None:
        self.zh = lang == "zh"

    def noise(self, kind: str) -> str:
        names = {
            "ci": ("CI", "CI"),
            "docs": ("文档", "docs"),
            "tests": ("测试", "tests"),
            "typo": ("拼写与格式", "typo/format"),
            "dependency": ("依赖升级", "dependency bump"),
            "revert": ("回退", "revert"),
            "version_bump": ("版本号", "version bump"),
        }
        zh, en = names.get(kind, (kind, kind))
        return f"（杂项：{zh}）" if self.zh else f" (noise: {en})"

    def day(self, iso: str) -> str:
        moment = _moment(iso)
        return f"{moment.month} 月 {moment.day} 日" if self.zh else moment.strftime("%b %-d")

    def kind(self, ref: dict[str, Any]) -> str:
        if self.zh:
            return "预发布" if ref["prerelease"] else "正式版"
        return "pre-release" if ref["prerelease"] else "stable"

    def status(self, row: dict[str, Any]) -> str:
        if self.zh:
            if row["status"] == "prerelease":
                return "本期 RC 迭代" if row["iterations"] > 1 else "预发布"
            return "从 RC 转为正式版" if row["status"] == "rc_to_stable" else "正式版"
        if row["status"] == "prerelease":
            return "pre-release iterations" if row["iterations"] > 1 else "pre-release"
        return "from RC to stable" if row["status"] == "rc_to_stable" else "stable"

    def window(self, window: dict[str, str]) -> str:
        start = _moment(window["start"])
        last = _moment(window["end"]) - timedelta(days=1)
        if self.zh:
            end = (
                f"{last.month}/{last.day}"
                if last.year == start.year
                else f"{last.year}/{last.month}/{last.day}"
            )
            return f"{start.year}/{start.month}/{start.day}—{end}"
        return f"{start:%Y-%m-%d} to {last:%Y-%m-%d}"

    def shipped(self, ref: dict[str, Any]) -> str:
        if self.zh:
            return f"{ref['version']}（{self.kind(ref)}，{self.day(ref['published_at'])}）"
        return f"{ref['version']} ({self.kind(ref)}, {self.day(ref['published_at'])})"

    def timing(self, item: dict[str, Any], window: dict[str, str]) -> str:
        if item["kind"] == "post":
            day = self.day(item["published_at"])
            if self.zh:
                return f"{day}发布于项目博客" + (
                    "（未注明日期，按首次收录）" if item["undated"] else ""
                )
            return f"posted {day} on the project blog" + (
                " (undated; first seen then)" if item["undated"] else ""
            )
        if item["merged_at"] is None:
            return "编辑补充" if self.zh else "added by the editors"
        merged = self.day(item["merged_at"])
        first, stable = item["first_release"], item["first_stable_release"]
        timing = item["timing"]
        if timing == "merged_unreleased":
            if self.zh:
                return f"{merged}合并，尚未进入发布版本（仅在主分支）"
            return f"merged {merged}, not in a release yet (main only)"
        if timing == "merged_and_released":
            text = (
                f"{merged}合并，已进入 {self.shipped(first)}"
                if self.zh
                else f"merged {merged}, shipped in {self.shipped(first)}"
            )
            if (
                stable
                and stable["tag"] != first["tag"]
                and _moment(stable["published_at"]) < _moment(window["end"])
            ):
                text += (
                    f"，正式版 {self.shipped(stable)}"
                    if self.zh
                    else f", stable in {self.shipped(stable)}"
                )
            return text
        # released_merged_earlier: never present it as new work
        earlier_rc = first and stable and _moment(first["published_at"]) < _moment(window["start"])
        if earlier_rc:
            if self.zh:
                return (
                    f"{merged}已合并，{first['version']} 预发布已含，"
                    f"本期进入 {self.shipped(stable)}"
                )
            return (
                f"merged {merged}, already in {first['version']}; "
                f"in a stable release this week: {self.shipped(stable)}"
            )
        if self.zh:
            return f"{merged}已合并，本期由 {self.shipped(first)}收录"
        return f"merged earlier ({merged}), shipped this week in {self.shipped(first)}"


def render_markdown(
    draft: dict[str, Any], lang: str = "zh", taxonomy: Taxonomy | None = None
) -> str:
    if lang not in LANGUAGES:
        raise InvalidInput(f"lang: {lang!r} is not one of {', '.join(LANGUAGES)}")
    taxonomy = taxonomy or default_taxonomy()
    wording = Wording(lang)
    numbers: dict[str, int] = {}

    def number(url: str) -> int:
        return numbers.setdefault(url, len(numbers) + 1)

    def model_names(item: dict[str, Any]) -> str:
        return ", ".join(f.name for key in item["models"] if (f := taxonomy.family(key)))

    template = _environment.get_template(f"draft.{lang}.md.j2")
    body = template.render(
        draft=draft,
        window_text=wording.window(draft["window"]),
        status_text=wording.status,
        day=wording.day,
        timing_text=lambda item: wording.timing(item, draft["window"]),
        model_names=model_names,
        noise_text=wording.noise,
        number=number,
    )
    sources = sorted(numbers, key=numbers.__getitem__)
    return body + "".join(f"[{index}] {url}\n" for index, url in enumerate(sources, 1))
