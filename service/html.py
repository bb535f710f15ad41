"""Untrusted Markdown (release notes, PR bodies) to safe HTML: markdown-it-py renders it,
nh3 (ammonia) keeps only harmless tags, attributes and link schemes."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

_markdown = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable("table")
ALLOWED_TAGS = {
    "a",
    "b",
    "blockquote",
    "br",
    "code",
    "del",
    "details",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "td": {"align"},
    "th": {"align"},
}
URL_SCHEMES = {"http", "https", "mailto"}
MAX_CHARS = 200_000


def safe_html(markdown_text: str | None) -> Markup:
    rendered = _markdown.render((markdown_text or "")[:MAX_CHARS])
    cleaned = nh3.clean(
        rendered,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return Markup(cleaned)  # sanitised just above
