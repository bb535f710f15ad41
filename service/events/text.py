"""Plain text out of release and pull-request text that may carry HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_WHITESPACE = re.compile(r"\s+")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class _TextCollector(HTMLParser):
    _SKIPPED = frozenset({"script", "style", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self._skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def plain_text(value: str | None, limit: int = 500) -> str:
    """Text without tags, entities decoded, whitespace collapsed, at most `limit` chars."""
    if not value:
        return ""
    collector = _TextCollector()
    collector.feed(value)
    collector.close()
    text = _CONTROL_CHARS.sub("", "".join(collector.parts))
    text = _WHITESPACE.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
