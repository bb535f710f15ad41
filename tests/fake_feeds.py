"""A local fake of feed hosts and PyPI's JSON API for tests.

One real HTTP server on 127.0.0.1 (random port, daemon thread) serving configurable paths:
RSS 2.0 and Atom blogs, GitHub-shaped releases.atom / tags.atom, PyPI per-release JSON, with
ETag / Last-Modified and 304s, a request log, injectable failures, slow and dripping
responses, oversized bodies, HTML, garbage and hostile XML. The body builders below copy the
shapes of the real documents.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import random
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlsplit

from packaging.utils import canonicalize_name

from tests.loopback import LoopbackServer, TrackedHandler

WEB_URL = "https://github.com"
PYPI_FILES = "https://files.pythonhosted.org/packages"


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- bodies ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Post:
    title: str
    link: str
    guid: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    summary_html: str = ""
    authors: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


def rss_blog(title: str, link: str, posts: Sequence[Post], *, description: str = "") -> bytes:
    """An RSS 2.0 blog feed as Jekyll/WordPress-style generators write it."""
    items = []
    for post in posts:
        parts = [f"<title>{escape(post.title)}</title>", f"<link>{escape(post.link)}</link>"]
        if post.guid:
            parts.append(f'<guid isPermaLink="false">{escape(post.guid)}</guid>')
        if post.published:
            parts.append(f"<pubDate>{email.utils.format_datetime(post.published)}</pubDate>")
        parts += [f"<dc:creator><![CDATA[{author}]]></dc:creator>" for author in post.authors]
        parts += [f"<category><![CDATA[{tag}]]></category>" for tag in post.tags]
        parts.append(f"<description><![CDATA[{post.summary_html}]]></description>")
        items.append("<item>" + "".join(parts) + "</item>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:atom="http://www.w3.org/2005/Atom">\n<channel>\n'
        f"<title>{escape(title)}</title>\n<link>{escape(link)}</link>\n"
        f"<description>{escape(description or title)}</description>\n"
        f'<atom:link href="{escape(link)}feed.xml" rel="self" type="application/rss+xml"/>\n'
        + "\n".join(items)
        + "\n</channel>\n</rss>\n"
    ).encode()


def atom_blog(title: str, link: str, posts: Sequence[Post], *, feed_id: str = "") -> bytes:
    """An Atom 1.0 blog feed (jekyll-feed's shape)."""
    newest = max(
        (p.updated or p.published for p in posts if p.updated or p.published), default=None
    )
    entries = []
    for post in posts:
        parts = [
            f'<title type="html">{escape(post.title)}</title>',
            f'<link href="{escape(post.link)}" rel="alternate" type="text/html"/>',
            f"<id>{escape(post.guid or post.link)}</id>",
        ]
        if post.published:
            parts.append(f"<published>{_iso(post.published)}</published>")
        if post.updated:
            parts.append(f"<updated>{_iso(post.updated)}</updated>")
        parts += [f"<author><name>{escape(a)}</name></author>" for a in post.authors]
        parts += [f'<category term="{escape(t)}"/>' for t in post.tags]
        parts.append(f'<summary type="html">{escape(post.summary_html)}</summary>')
        entries.append("<entry>" + "".join(parts) + "</entry>")
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f'<link href="{escape(link)}feed.xml" rel="self" type="application/atom+xml"/>\n'
        f'<link href="{escape(link)}" rel="alternate" type="text/html"/>\n'
        + (f"<updated>{_iso(newest)}</updated>\n" if newest else "")
        + f'<id>{escape(feed_id or link)}</id>\n<title type="html">{escape(title)}</title>\n'
        + "\n".join(entries)
        + "\n</feed>\n"
    ).encode()


@dataclass(frozen=True)
class GitHubRelease:
    tag: str
    updated: datetime
    title: str | None = None
    body_html: str = ""
    author: str = "octocat"


def github_atom(
    repo: str,
    releases: Sequence[GitHubRelease],
    *,
    kind: str = "releases",
    repo_id: int = 599547518,
    web_url: str = WEB_URL,
) -> bytes:
    """GitHub's ``{web}/{o}/{r}/releases.atom`` (or ``tags.atom``), newest entry first."""
    name = repo.split("/", 1)[1]
    base = f"{web_url}/{repo}"
    heading = f"Release notes from {name}" if kind == "releases" else f"Tags from {name}"
    newest = max((r.updated for r in releases), default=datetime(2026, 1, 1, tzinfo=UTC))
    entries = []
    for release in releases:
        href = f"{base}/releases/tag/{quote(release.tag, safe='')}"
        entries.append(
            "  <entry>\n"
            f"    <id>tag:github.com,2008:Repository/{repo_id}/{escape(release.tag)}</id>\n"
            f"    <updated>{_iso(release.updated)}</updated>\n"
            f'    <link rel="alternate" type="text/html" href="{escape(href)}"/>\n'
            f"    <title>{escape(release.title or release.tag)}</title>\n"
            f'    <content type="html">{escape(release.body_html or "No content.")}</content>\n'
            f"    <author>\n      <name>{escape(release.author)}</name>\n    </author>\n"
            '    <media:thumbnail height="30" width="30" '
            'url="https://avatars.githubusercontent.com/u/583231?s=60&amp;v=4"/>\n'
            "  </entry>\n"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/"'
        ' xml:lang="en-US">\n'
        f"  <id>tag:github.com,2008:{base}/{kind}</id>\n"
        f'  <link type="text/html" rel="alternate" href="{base}/{kind}"/>\n'
        f'  <link type="application/atom+xml" rel="self" href="{base}/{kind}.atom"/>\n'
        f"  <title>{escape(heading)}</title>\n"
        f"  <updated>{_iso(newest)}</updated>\n" + "".join(entries) + "</feed>\n"
    ).encode()


@dataclass(frozen=True)
class PyPIFile:
    filename: str
    packagetype: str  # "bdist_wheel" | "sdist"
    uploaded: datetime
    yanked: bool = False
    yanked_reason: str | None = None
    python_version: str = "py3"
    size: int = 123_456


def pypi_release(
    name: str, version: str, files: Sequence[PyPIFile], *, yanked: bool = False
) -> dict[str, Any]:
    """The per-release JSON of ``GET /pypi/{name}/{version}/json`` (docs.pypi.org/api/json)."""
    urls = []
    for f in files:
        digest = hashlib.sha256(f.filename.encode()).hexdigest()
        md5 = hashlib.md5(f.filename.encode()).hexdigest()
        blake = hashlib.blake2b(f.filename.encode(), digest_size=32).hexdigest()
        urls.append(
            {
                "comment_text": "",
                "core-metadata": {"sha256": digest} if f.packagetype == "bdist_wheel" else False,
                "digests": {"blake2b_256": blake, "md5": md5, "sha256": digest},
                "downloads": -1,
                "filename": f.filename,
                "has_sig": False,
                "md5_digest": md5,
                "packagetype": f.packagetype,
                "python_version": f.python_version if f.packagetype != "sdist" else "source",
                "requires_python": ">=3.10",
                "size": f.size,
                "upload_time": f.uploaded.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
                "upload_time_iso_8601": f.uploaded.astimezone(UTC).strftime(
                    "%Y-%m-%dT%H:%M:%S.%fZ"
                ),
                "url": f"{PYPI_FILES}/{blake[:2]}/{blake[2:4]}/{blake[4:]}/{f.filename}",
                "yanked": f.yanked or yanked,
                "yanked_reason": f.yanked_reason,
            }
        )
    return {
        "info": {
            "author": "",
            "bugtrack_url": None,
            "classifiers": ["Programming Language :: Python :: 3"],
            "description": "...",
            "description_content_type": "text/markdown",
            "home_page": "",
            "name": name,
            "package_url": f"https://pypi.org/project/{name}/",
            "project_url": f"https://pypi.org/project/{name}/",
            "release_url": f"https://pypi.org/project/{name}/{version}/",
            "requires_python": ">=3.10",
            "summary": f"{name} summary",
            "version": version,
            "yanked": yanked,
            "yanked_reason": "broken build" if yanked else None,
        },
        "last_serial": 31_415_926,
        "urls": urls,
        "vulnerabilities": [],
    }


HTML_PAGE = (
    b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Blog</title>'
    b'<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head>'
    b"<body><h1>Our blog</h1><p>Posts are rendered by JavaScript.</p></body></html>\n"
)
GARBAGE = bytes(random.Random(7).randrange(256) for _ in range(4096))


def billion_laughs(levels: int = 10) -> bytes:
    """The classic exponential entity expansion: 10 levels expand to 10**levels 'lol'."""
    decls = ['<!ENTITY lol0 "lol">']
    decls += [
        f'<!ENTITY lol{i} "{"".join(f"&lol{i - 1};" for _ in range(10))}">'
        for i in range(1, levels + 1)
    ]
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE rss [\n  '
        + "\n  ".join(decls)
        + f'\n]>\n<rss version="2.0"><channel><title>&lol{levels};</title>'
        "<item><title>x</title></item></channel></rss>\n"
    ).encode()


def external_entity(url: str) -> bytes:
    """XXE: an external general entity that a careless parser fetches and inlines."""
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE rss [\n  <!ENTITY leak SYSTEM "' + url + '">\n]>\n'
        '<rss version="2.0"><channel><title>Blog</title>'
        "<item><title>&leak;</title><link>https://example.org/p</link></item>"
        "</channel></rss>\n"
    ).encode()


def parameter_entity(url: str) -> bytes:
    """An external parameter entity referenced inside the DTD."""
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE rss [\n  <!ENTITY % remote SYSTEM "'
        + url
        + '">\n  %remote;\n]>\n<rss version="2.0"><channel><title>Blog</title></channel></rss>\n'
    ).encode()


def external_dtd(url: str) -> bytes:
    """A DOCTYPE whose external subset lives at ``url`` (RSS 0.91's Netscape DTD shape)."""
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"'
        f' "{url}">\n<rss version="0.91"><channel><title>Old blog</title>'
        "<link>https://example.org/</link><description>d</description>"
        "<item><title>Hello</title><link>https://example.org/hello</link></item>"
        "</channel></rss>\n"
    ).encode()


# -- server ----------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0


@dataclass
class Route:
    body: bytes = b""
    content_type: str = "application/xml"
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    declare_length: bool = True  # False: no content-length, connection closed at the end
    stream_total: int | None = None  # stream this many bytes of ``body`` repeated
    drip: float = 0.0  # seconds between streamed chunks
    chunk: int = 65536


class _Server(LoopbackServer):
    def __init__(self, fake: FakeFeeds) -> None:
        self.fake = fake
        super().__init__(_Handler)


class _Handler(TrackedHandler):
    server_version = "fake-feeds"
    server: _Server

    def handle(self) -> None:
        # Clients that stop reading (size caps, timeouts) hang up mid-connection.
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            super().handle()

    def do_GET(self) -> None:
        fake = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = urlsplit(self.path).path
        record = RecordedRequest(self.command, path, headers)
        with fake._lock:
            fake.requests.append(record)
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            route = fake._route_for(path)
            if route.delay and fake._stopping.wait(route.delay):
                return
            status = route.status
            if status == 200 and _not_modified(route, headers):
                status = 304
            record.status = status
            self._respond(route, status, path)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            with fake._lock:
                fake.in_flight -= 1

    def _respond(self, route: Route, status: int, path: str) -> None:
        fake = self.server.fake
        self.send_response(status)
        self.send_header("content-type", route.content_type)
        if route.etag:
            self.send_header("etag", route.etag)
        if route.last_modified:
            self.send_header("last-modified", route.last_modified)
        for key, value in route.headers.items():
            self.send_header(key, value)
        if status == 304:
            self.end_headers()
            return
        total = route.stream_total if route.stream_total is not None else len(route.body)
        if route.declare_length:
            self.send_header("content-length", str(total))
        else:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        if route.stream_total is None:
            self.wfile.write(route.body)
            fake._count(path, len(route.body))
            return
        sent = 0
        piece = (route.body * (route.chunk // max(len(route.body), 1) + 1))[: route.chunk]
        while sent < total and not fake._stopping.is_set():
            part = piece[: total - sent]
            self.wfile.write(part)
            sent += len(part)
            fake._count(path, len(part))
            if route.drip and fake._stopping.wait(route.drip):
                break

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _not_modified(route: Route, headers: dict[str, str]) -> bool:
    if route.etag and headers.get("if-none-match"):
        tags = [t.strip() for t in headers["if-none-match"].split(",")]
        return route.etag in tags or "*" in tags
    if route.last_modified and headers.get("if-modified-since"):
        try:
            since = email.utils.parsedate_to_datetime(headers["if-modified-since"])
            modified = email.utils.parsedate_to_datetime(route.last_modified)
        except (TypeError, ValueError):
            return False
        return modified <= since
    return False


_PYPI_PATH = re.compile(r"^/pypi/(?P<name>[^/]+)/(?P<version>[^/]+)/json$")


class FakeFeeds:
    """See the module docstring; use as a context manager."""

    def __init__(self) -> None:
        self.base_url = ""
        self.requests: list[RecordedRequest] = []
        self.bytes_sent: dict[str, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0  # most requests being answered at the same moment
        self._routes: dict[str, Route] = {}
        self._failures: dict[str, list[Route]] = {}
        self._pypi_names: dict[str, str] = {}
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server: _Server | None = None

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> str:
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            self.base_url = self._server.start("fake-feeds")
        return self.base_url

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.stop()

    def __enter__(self) -> FakeFeeds:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- configuration -------------------------------------------------------------

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def route(self, path: str, body: bytes = b"", **options: Any) -> Route:
        """Serve ``body`` at ``path``; options are the fields of :class:`Route`."""
        route = Route(body=body, **options)
        with self._lock:
            self._routes[path] = route
        return route

    def fail_next(
        self,
        path: str,
        status: int,
        *,
        count: int = 1,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """The next ``count`` requests to ``path`` get ``status`` (or just wait ``delay``)."""
        failure = Route(
            body=body or HTTPStatus(status).phrase.encode(),
            content_type="text/plain",
            status=status,
            headers=dict(headers or {}),
            delay=delay,
        )
        with self._lock:
            self._failures.setdefault(path, []).extend([failure] * count)

    def rss(self, path: str, posts: Sequence[Post], **options: Any) -> Route:
        body = rss_blog("Example blog", "https://blog.example.org/", posts)
        return self.route(path, body, **{"content_type": "application/rss+xml"} | options)

    def atom(self, path: str, posts: Sequence[Post], **options: Any) -> Route:
        body = atom_blog("Example Atom blog", "https://atom.example.org/", posts)
        return self.route(path, body, **{"content_type": "application/atom+xml"} | options)

    def github(
        self,
        repo: str,
        releases: Sequence[GitHubRelease],
        *,
        kind: str = "releases",
        **options: Any,
    ) -> Route:
        """``/{repo}/releases.atom`` or ``/{repo}/tags.atom`` as github.com serves it."""
        body = github_atom(repo, releases, kind=kind)
        defaults = {
            "content_type": "application/atom+xml; charset=utf-8",
            "etag": f'W/"{hashlib.md5(body).hexdigest()}"',
        }
        return self.route(f"/{repo}/{kind}.atom", body, **defaults | options)

    def pypi(
        self, name: str, version: str, files: Sequence[PyPIFile], *, yanked: bool = False
    ) -> Route:
        canonical = canonicalize_name(name)
        with self._lock:
            self._pypi_names[canonical] = name
        body = json.dumps(pypi_release(name, version, files, yanked=yanked)).encode()
        return self.route(f"/pypi/{name}/{version}/json", body, content_type="application/json")

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- serving -------------------------------------------------------------------

    def _count(self, path: str, size: int) -> None:
        with self._lock:
            self.bytes_sent[path] = self.bytes_sent.get(path, 0) + size

    def _route_for(self, path: str) -> Route:
        with self._lock:
            queued = self._failures.get(path)
            if queued:
                return queued.pop(0)
            route = self._routes.get(path)
            if route is not None:
                return route
            match = _PYPI_PATH.match(path)
            if match:
                # PyPI redirects other spellings of a project name to the canonical one.
                canonical = self._pypi_names.get(canonicalize_name(match["name"]))
                if canonical and canonical != match["name"]:
                    location = f"/pypi/{canonical}/{match['version']}/json"
                    return Route(status=301, headers={"location": location})
                return Route(
                    body=b'{"message": "Not Found"}', content_type="application/json", status=404
                )
        return Route(body=b"Not Found", content_type="text/plain", status=404)
