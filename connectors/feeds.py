"""RSS 2.0 / Atom 1.0 feeds (project blogs, GitHub's releases.atom and tags.atom).

Fetch with httpx and parse with feedparser into plain records; no database access. Callers
hand in the ``etag`` / ``last_modified`` they stored and get back the new ones; a 304 gives a
``not_modified`` result without entries. Every way a feed can be unusable raises a
:class:`FeedError` subclass with a message, so that the caller records it on that feed and
goes on with the next one.

Untrusted XML is handled in three layers:

1. the body is read as a stream and refused past ``max_bytes`` (default 10 MB);
2. before feedparser sees it, the body is parsed once by defusedxml's expat reader with
   entity declarations forbidden: any ``<!ENTITY`` (internal, external or parameter — the
   billion-laughs and XXE shapes) is refused as :class:`HostileFeed`. External references
   (a DOCTYPE's external subset such as RSS 0.91's Netscape DTD) are never resolved: the
   stdlib reader ignores them while ``feature_external_ges`` is off, which we set;
3. feedparser then parses from an in-memory stream (never a string, which it may treat as a
   URL or a file name), with its own DOCTYPE stripping and external entities off.

Titles and summaries are returned as plain text: every tag is removed and the content of
script, style, iframe and similar elements is dropped, so nothing executable survives.
"""

from __future__ import annotations

import calendar
import io
import logging
import re
import time
import xml.sax
import xml.sax.handler
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import feedparser
import httpx
from defusedxml import DefusedXmlException
from defusedxml.expatreader import create_parser as create_defused_parser

from connectors.http import gate_for

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_TIMEOUT = 20.0
MAX_SUMMARY_CHARS = 2000
USER_AGENT = "ai-infra-digest (+feeds)"
ACCEPT = (
    "application/atom+xml, application/rss+xml, application/rdf+xml;q=0.9, "
    "application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1"
)
_XML_TYPES = frozenset(
    {
        "application/atom+xml",
        "application/rss+xml",
        "application/rdf+xml",
        "application/xml",
        "text/xml",
        "application/x-rss+xml",
        "application/x-atom+xml",
    }
)
# Served by misconfigured hosts for real feeds; accepted only when the body is a feed.
_SNIFFED_TYPES = frozenset({"", "text/plain", "application/octet-stream", "text/html"})
_FEED_ROOTS = frozenset({"rss", "feed", "rdf"})
_ROOT = re.compile(
    rb"\A(?:\xef\xbb\xbf)?\s*"
    rb"(?:<\?.*?\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>\s*)*"
    rb"<([A-Za-z_][\w.:-]*)",
    re.DOTALL,
)
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_GITHUB_ENTRY_ID = re.compile(r"^tag:github\.com,2008:Repository/\d+/(?P<tag>.+)$")


class FeedError(Exception):
    """The feed could not be used; ``status`` is the HTTP status where there was one."""

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class FeedHTTPError(FeedError):
    """A 4xx or 5xx answer."""


class FeedTimeout(FeedError):
    """No answer, or not the whole body, within the timeout."""


class FeedConnectionError(FeedError):
    """Connection refused or reset, DNS failure, TLS failure, too many redirects."""


class FeedTooLarge(FeedError):
    """The body is over the size cap; reading stopped there."""


class FeedContentTypeError(FeedError):
    """A content type no feed is served as (JSON, images, ...)."""


class NotAFeed(FeedError):
    """An HTML page, another XML document, an empty body or garbage."""


class HostileFeed(FeedError):
    """XML with entity declarations: entity expansion or external-entity attacks."""


@dataclass(frozen=True)
class FeedEntry:
    guid: str | None
    link: str | None
    title: str
    # Aware UTC from the entry's published date, else its updated date.
    published: datetime | None
    # True when the entry carries no usable date: the caller uses the first-seen time.
    undated: bool
    updated: datetime | None
    summary: str  # plain text, tags and scripts removed
    authors: tuple[str, ...]
    tags: tuple[str, ...]

    @property
    def dedupe_key(self) -> str:
        """Entries are the same post when their guid, else their link, else title match."""
        if self.guid:
            return f"guid:{self.guid}"
        if self.link:
            return f"link:{self.link}"
        return f"title:{self.title}"


@dataclass(frozen=True)
class FeedResult:
    url: str  # after redirects
    not_modified: bool
    etag: str | None
    last_modified: str | None
    format: str | None  # feedparser's name: "rss20", "atom10", ...
    title: str | None
    link: str | None
    entries: tuple[FeedEntry, ...]


@dataclass(frozen=True)
class AtomTag:
    """One entry of GitHub's releases.atom or tags.atom."""

    tag: str
    updated: datetime
    link: str
    title: str


@dataclass(frozen=True)
class GitHubAtomResult:
    url: str
    not_modified: bool
    etag: str | None
    last_modified: str | None
    tags: tuple[AtomTag, ...]


def github_atom_url(web_url: str, repo: str, kind: Literal["releases", "tags"]) -> str:
    """``{web}/{owner}/{name}/releases.atom`` or ``tags.atom``; they cost no API quota."""
    return f"{web_url.rstrip('/')}/{repo}/{kind}.atom"


# -- parsing ---------------------------------------------------------------------------


class _TextExtractor(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "iframe", "object", "svg"})
    _BLOCK = frozenset(
        {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "pre"}
        | {"blockquote", "table", "section", "article", "hr"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skipping += 1
        elif tag in self._BLOCK:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self._BLOCK:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_to_text(value: str, *, limit: int | None = None) -> str:
    """Plain text of an HTML fragment: no tags, no script or style content, entities decoded,
    whitespace collapsed; cut at ``limit`` characters on a word boundary."""
    extractor = _TextExtractor()
    extractor.feed(value)
    extractor.close()
    text = " ".join("".join(extractor.parts).split())
    if limit is not None and len(text) > limit:
        cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
        text = cut.rstrip() + "…"
    return text


def _plain(detail: Mapping[str, Any] | None, value: str, limit: int | None = None) -> str:
    kind = str((detail or {}).get("type") or "text/html")
    if kind == "text/plain":
        text = " ".join(value.split())
        return text if limit is None or len(text) <= limit else text[:limit].rstrip() + "…"
    return html_to_text(value, limit=limit)


def _timestamp(parsed: time.struct_time | None) -> datetime | None:
    # feedparser normalises every date it can read to a UTC struct_time.
    if not parsed:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(parsed), UTC)
    except (OverflowError, ValueError, OSError):
        return None


def _media_type(content_type: str | None) -> tuple[str, str]:
    """(media type, the rest with its parameters such as charset)."""
    if not content_type:
        return "", ""
    media, _, params = content_type.partition(";")
    return media.strip().lower(), params.strip()


def _root_element(body: bytes) -> str | None:
    head = body[:65536]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        head = head.decode("utf-16", "replace").encode("utf-8")
    match = _ROOT.match(head)
    if match is None:
        return None
    return match.group(1).decode("ascii", "replace").rsplit(":", 1)[-1].lower()


def _check_xml_safety(body: bytes, url: str) -> None:
    """Refuse entity declarations; see the module docstring."""
    parser = create_defused_parser(forbid_dtd=False, forbid_entities=True, forbid_external=False)
    parser.setFeature(xml.sax.handler.feature_external_ges, False)
    parser.setContentHandler(xml.sax.handler.ContentHandler())
    source = xml.sax.xmlreader.InputSource()
    source.setByteStream(io.BytesIO(body))
    try:
        parser.parse(source)
    except DefusedXmlException as exc:
        raise HostileFeed(f"{url}: refused XML entity declaration ({exc!r})", url=url) from exc
    except xml.sax.SAXException:
        # Not well-formed, so expat stopped early and may not have seen the whole DTD.
        # feedparser's lenient parser still gets a chance, but never with declarations.
        root = _ROOT.match(body[:65536])
        prolog = body[: root.start(1)] if root else body[:65536]
        if _ENTITY_DECL.search(prolog):
            raise HostileFeed(f"{url}: refused XML entity declaration", url=url) from None


def _entry(raw: Mapping[str, Any], max_summary: int) -> FeedEntry:
    published = _timestamp(raw.get("published_parsed"))
    # ``raw.get("updated_parsed")`` would answer the published date (feedparser issue 310).
    updated = _timestamp(raw["updated_parsed"]) if "updated_parsed" in raw else None
    summary_value = raw.get("summary")
    summary_detail = raw.get("summary_detail")
    if not summary_value and raw.get("content"):
        first = raw["content"][0]
        summary_value, summary_detail = first.get("value"), first
    authors = tuple(
        str(author["name"]).strip()
        for author in raw.get("authors") or []
        if isinstance(author, Mapping) and author.get("name")
    )
    if not authors and raw.get("author"):
        authors = (str(raw["author"]).strip(),)
    tags = tuple(
        str(tag.get("label") or tag.get("term")).strip()
        for tag in raw.get("tags") or []
        if isinstance(tag, Mapping) and (tag.get("label") or tag.get("term"))
    )
    date = published or updated
    return FeedEntry(
        guid=str(raw["id"]) if raw.get("id") else None,
        link=str(raw["link"]) if raw.get("link") else None,
        title=_plain(raw.get("title_detail"), str(raw.get("title") or "")),
        published=date,
        undated=date is None,
        updated=updated,
        summary=_plain(summary_detail, str(summary_value or ""), max_summary),
        authors=authors,
        tags=tuple(dict.fromkeys(tags)),
    )


@dataclass(frozen=True)
class ParsedFeed:
    format: str
    title: str | None
    link: str | None
    entries: tuple[FeedEntry, ...]


def parse_feed(
    body: bytes,
    *,
    url: str,
    content_type: str | None = None,
    max_summary_chars: int = MAX_SUMMARY_CHARS,
) -> ParsedFeed:
    """Parse a feed body already fetched; raises NotAFeed, FeedContentTypeError, HostileFeed."""
    media, params = _media_type(content_type)
    if media not in _XML_TYPES and media not in _SNIFFED_TYPES and not media.endswith("+xml"):
        raise FeedContentTypeError(f"{url}: served as {media!r}, not as a feed", url=url)
    if not body.strip():
        raise NotAFeed(f"{url}: empty body", url=url)
    root = _root_element(body)
    if root in ("html", "head", "body"):
        raise NotAFeed(f"{url}: an HTML page, not a feed", url=url)
    if root is None:
        raise NotAFeed(f"{url}: not XML (garbage body)", url=url)
    if root not in _FEED_ROOTS:
        raise NotAFeed(f"{url}: an XML document with root <{root}>, not a feed", url=url)
    _check_xml_safety(body, url)
    # feedparser reads the charset from the content type; a sniffed one is XML all the same.
    declared = media if media in _XML_TYPES or media.endswith("+xml") else "application/xml"
    headers = {
        "content-type": f"{declared}; {params}" if params else declared,
        "content-location": url,
    }
    # Markup is reduced to plain text by html_to_text, which also drops the content of
    # script/style/iframe elements; feedparser's sanitizer would keep iframe text.
    result = feedparser.parse(io.BytesIO(body), response_headers=headers, sanitize_html=False)
    version = result.get("version") or ""
    if not version:
        problem = result.get("bozo_exception")
        raise NotAFeed(f"{url}: not a feed ({problem or 'unknown format'})", url=url)
    if result.get("bozo"):
        log.debug("%s: feed is not well-formed: %s", url, result.get("bozo_exception"))
    feed = result.get("feed") or {}
    entries = tuple(_entry(raw, max_summary_chars) for raw in result.get("entries") or [])
    title = _plain(feed.get("title_detail"), str(feed["title"])) if feed.get("title") else None
    return ParsedFeed(
        format=version,
        title=title or None,
        link=str(feed["link"]) if feed.get("link") else None,
        entries=entries,
    )


def github_atom_tags(entries: Iterable[FeedEntry]) -> tuple[AtomTag, ...]:
    """(tag, updated, link) of each entry of a GitHub releases.atom or tags.atom feed.

    The tag is read from the entry id (``tag:github.com,2008:Repository/<id>/<tag>``), else
    from the ``/releases/tag/<tag>`` link; entries without a tag or a date are skipped."""
    tags: list[AtomTag] = []
    for entry in entries:
        tag = None
        match = _GITHUB_ENTRY_ID.match(entry.guid or "")
        if match:
            tag = match.group("tag")
        elif entry.link and "/releases/tag/" in entry.link:
            tag = unquote(urlsplit(entry.link).path.split("/releases/tag/", 1)[1])
        when = entry.updated or entry.published
        if not tag or when is None:
            log.warning("skipping GitHub feed entry without tag or date: %r", entry.guid)
            continue
        tags.append(AtomTag(tag=tag, updated=when, link=entry.link or "", title=entry.title))
    return tuple(tags)


# -- fetching --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fetched:
    url: str
    status: int
    etag: str | None
    last_modified: str | None
    content_type: str | None
    body: bytes


class FeedClient:
    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_summary_chars: int = MAX_SUMMARY_CHARS,
        user_agent: str = USER_AGENT,
        max_redirects: int = 5,
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_summary_chars = max_summary_chars
        self.http = httpx.Client(
            headers={"User-Agent": user_agent, "Accept": ACCEPT},
            timeout=timeout,
            follow_redirects=True,
            max_redirects=max_redirects,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> FeedClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def fetch(
        self, url: str, *, etag: str | None = None, last_modified: str | None = None
    ) -> FeedResult:
        """GET and parse a feed; a 304 gives ``not_modified`` and no entries."""
        fetched = self._get(url, etag, last_modified)
        if fetched.status == 304:
            return FeedResult(
                url=fetched.url,
                not_modified=True,
                etag=fetched.etag or etag,
                last_modified=fetched.last_modified or last_modified,
                format=None,
                title=None,
                link=None,
                entries=(),
            )
        parsed = parse_feed(
            fetched.body,
            url=fetched.url,
            content_type=fetched.content_type,
            max_summary_chars=self.max_summary_chars,
        )
        return FeedResult(
            url=fetched.url,
            not_modified=False,
            etag=fetched.etag,
            last_modified=fetched.last_modified,
            format=parsed.format,
            title=parsed.title,
            link=parsed.link,
            entries=parsed.entries,
        )

    def fetch_github_atom(
        self, url: str, *, etag: str | None = None, last_modified: str | None = None
    ) -> GitHubAtomResult:
        """A GitHub releases.atom / tags.atom feed (see :func:`github_atom_url`) as tags."""
        result = self.fetch(url, etag=etag, last_modified=last_modified)
        return GitHubAtomResult(
            url=result.url,
            not_modified=result.not_modified,
            etag=result.etag,
            last_modified=result.last_modified,
            tags=github_atom_tags(result.entries),
        )

    def _get(self, url: str, etag: str | None, last_modified: str | None) -> _Fetched:
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        gate = gate_for(urlsplit(url).netloc)
        # Read timeouts apply per read; this bounds a server that drips the body slowly.
        deadline = time.monotonic() + self.timeout
        try:
            with gate.lock, self.http.stream("GET", url, headers=headers) as response:
                final_url = str(response.url)
                status = response.status_code
                if status >= 400:
                    raise FeedHTTPError(
                        f"{final_url}: HTTP {status} {response.reason_phrase}".rstrip(),
                        url=final_url,
                        status=status,
                    )
                body = b"" if status == 304 else self._read_capped(response, final_url, deadline)
                return _Fetched(
                    url=final_url,
                    status=status,
                    etag=response.headers.get("etag"),
                    last_modified=response.headers.get("last-modified"),
                    content_type=response.headers.get("content-type"),
                    body=body,
                )
        except httpx.TimeoutException as exc:
            raise FeedTimeout(f"{url}: timed out ({exc})", url=url) from exc
        except httpx.TooManyRedirects as exc:
            raise FeedConnectionError(f"{url}: too many redirects", url=url) from exc
        except httpx.DecodingError as exc:
            raise NotAFeed(f"{url}: undecodable content encoding ({exc})", url=url) from exc
        except httpx.HTTPError as exc:
            raise FeedConnectionError(f"{url}: connection failed ({exc})", url=url) from exc

    def _read_capped(self, response: httpx.Response, url: str, deadline: float) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise FeedTooLarge(
                f"{url}: body of {int(declared)} bytes is over the {self.max_bytes}-byte cap",
                url=url,
            )
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise FeedTooLarge(
                    f"{url}: body is over the {self.max_bytes}-byte cap; stopped reading",
                    url=url,
                )
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise FeedTimeout(f"{url}: body not received within {self.timeout}s", url=url)
        return b"".join(chunks)
