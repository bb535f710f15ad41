"""Atom 1.0 documents (RFC 4287) for the feeds the service publishes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from xml.etree import ElementTree

from service.windows import iso_utc

ATOM = "http://www.w3.org/2005/Atom"


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    link: str
    updated: datetime
    summary: str = ""
    author: str | None = None
    categories: Sequence[str] = ()


def feed(
    *,
    feed_id: str,
    title: str,
    self_link: str,
    alternate: str,
    updated: datetime,
    entries: Sequence[Entry],
    author: str = "AI infrastructure weekly digest",
) -> bytes:
    ElementTree.register_namespace("", ATOM)
    root = ElementTree.Element(f"{{{ATOM}}}feed")

    def child(
        parent: ElementTree.Element, tag: str, text: str | None = None, **attrs: str
    ) -> ElementTree.Element:
        element = ElementTree.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        if text is not None:
            element.text = text
        return element

    child(root, "id", feed_id)
    child(root, "title", title)
    child(root, "updated", iso_utc(updated))
    child(root, "link", rel="self", href=self_link, type="application/atom+xml")
    child(root, "link", rel="alternate", href=alternate)
    child(child(root, "author"), "name", author)
    for item in entries:
        entry = child(root, "entry")
        child(entry, "id", item.id)
        child(entry, "title", item.title)
        child(entry, "updated", iso_utc(item.updated))
        child(entry, "link", rel="alternate", href=item.link)
        if item.author:
            child(child(entry, "author"), "name", item.author)
        for term in item.categories:
            child(entry, "category", term=term)
        if item.summary:
            child(entry, "summary", item.summary, type="text")
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
