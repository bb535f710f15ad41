"""The feed connector against a local fake: parsing, validators, and every way a feed fails."""

from __future__ import annotations

import io
import socket
import xml.sax
import xml.sax.handler
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest

from connectors.feeds import (
    DEFAULT_MAX_BYTES,
    FeedClient,
    FeedConnectionError,
    FeedContentTypeError,
    FeedEntry,
    FeedError,
    FeedHTTPError,
    FeedResult,
    FeedTimeout,
    FeedTooLarge,
    HostileFeed,
    NotAFeed,
    github_atom_url,
    html_to_text,
    parse_feed,
)
from tests.fake_feeds import (
    GARBAGE,
    HTML_PAGE,
    FakeFeeds,
    GitHubRelease,
    Post,
    billion_laughs,
    external_dtd,
    external_entity,
    parameter_entity,
    rss_blog,
)

CST = timezone(timedelta(hours=8))
PDT = timezone(timedelta(hours=-7))
POSTS = [
    Post(
        title="Watermarking in vLLM",
        link="https://blog.example.org/2026/10/05/watermarking.html",
        guid="https://blog.example.org/2026/10/05/watermarking",
        published=datetime(2026, 10, 6, 7, 30, tzinfo=CST),
        summary_html=(
            "<p>We add <b>watermarking</b> &amp; detection.</p>"
            "<script>alert('owned')</script><style>p { color: red }</style>"
            "<iframe src='https://evil.example'>inner</iframe>"
        ),
        authors=("vLLM Team",),
        tags=("feature", "security"),
    ),
    Post(
        title="PD Serving of Qwen3.8-2.4T",
        link="https://blog.example.org/2026/10/01/pd.html",
        published=datetime(2026, 9, 30, 23, 30, tzinfo=PDT),
        summary_html="<p>Disaggregated prefill/decode.</p>",
    ),
    Post(title="Undated notes", link="https://blog.example.org/notes.html"),
]


@pytest.fixture
def fake() -> Iterator[FakeFeeds]:
    with FakeFeeds() as server:
        yield server


@pytest.fixture
def other() -> Iterator[FakeFeeds]:
    """A second host: hostile documents point their entities at it."""
    with FakeFeeds() as server:
        yield server


@pytest.fixture
def client() -> Iterator[FeedClient]:
    with FeedClient(timeout=5.0) as feed_client:
        yield feed_client


def test_rss_entries_become_records_in_utc(fake: FakeFeeds, client: FeedClient) -> None:
    fake.rss("/feed.xml", POSTS)
    result = client.fetch(fake.url("/feed.xml"))
    assert result.format == "rss20" and result.title == "Example blog"
    first, second, undated = result.entries
    assert first.title == "Watermarking in vLLM"
    assert first.guid == "https://blog.example.org/2026/10/05/watermarking"
    assert first.link == "https://blog.example.org/2026/10/05/watermarking.html"
    assert first.published == datetime(2026, 10, 5, 23, 30, tzinfo=UTC)
    assert first.published.tzinfo is UTC and not first.undated
    assert first.authors == ("vLLM Team",) and first.tags == ("feature", "security")
    # 2026-09-30T23:30-07:00 is in October in UTC (R1).
    assert second.published == datetime(2026, 10, 1, 6, 30, tzinfo=UTC)
    assert undated.published is None and undated.undated


def test_summaries_are_plain_text_without_scripts(fake: FakeFeeds, client: FeedClient) -> None:
    fake.rss("/feed.xml", POSTS)
    summary = client.fetch(fake.url("/feed.xml")).entries[0].summary
    assert summary == "We add watermarking & detection."
    assert "<" not in summary and "alert" not in summary and "color" not in summary


def test_html_to_text_drops_markup_and_cuts_on_a_word() -> None:
    text = html_to_text("<div><p>one</p><p>two &lt;three&gt;</p><script>x()</script></div>")
    assert text == "one two <three>"
    assert html_to_text("alpha beta gamma", limit=12) == "alpha beta…"


def test_atom_entries_prefer_published_and_fall_back_to_updated(
    fake: FakeFeeds, client: FeedClient
) -> None:
    posts = [
        Post(
            title="Kernels &amp; <i>more</i>",
            link="https://atom.example.org/a",
            guid="urn:uuid:1",
            published=datetime(2026, 10, 2, tzinfo=UTC),
            updated=datetime(2026, 10, 3, tzinfo=UTC),
            summary_html="<p>Hello</p>",
            authors=("A", "B"),
            tags=("kernels",),
        ),
        Post(
            title="Only updated",
            link="https://atom.example.org/b",
            updated=datetime(2026, 10, 4, 1, 2, 3, tzinfo=UTC),
        ),
    ]
    fake.atom("/atom.xml", posts)
    result = client.fetch(fake.url("/atom.xml"))
    assert result.format == "atom10"
    first, second = result.entries
    assert first.title == "Kernels & more" and first.guid == "urn:uuid:1"
    assert first.published == datetime(2026, 10, 2, tzinfo=UTC)
    assert first.updated == datetime(2026, 10, 3, tzinfo=UTC)
    assert first.authors == ("A", "B") and first.tags == ("kernels",)
    assert second.published == datetime(2026, 10, 4, 1, 2, 3, tzinfo=UTC)
    assert not second.undated


def test_entries_dedupe_by_guid_then_link() -> None:
    def entry(guid: str | None, link: str | None) -> FeedEntry:
        return FeedEntry(guid, link, "t", None, True, None, "", (), ())

    assert entry("g", "l").dedupe_key == "guid:g"
    assert entry(None, "l").dedupe_key == "link:l"
    assert entry(None, None).dedupe_key == "title:t"


def test_etag_gives_not_modified_without_entries(fake: FakeFeeds, client: FeedClient) -> None:
    fake.rss("/feed.xml", POSTS, etag='"v1"', last_modified="Tue, 06 Oct 2026 08:00:00 GMT")
    first = client.fetch(fake.url("/feed.xml"))
    assert first.etag == '"v1"' and first.last_modified == "Tue, 06 Oct 2026 08:00:00 GMT"
    second = client.fetch(fake.url("/feed.xml"), etag=first.etag)
    assert second.not_modified and second.entries == ()
    assert second.etag == '"v1"'
    assert fake.requests[-1].headers["if-none-match"] == '"v1"'
    assert fake.requests[-1].status == 304


def test_last_modified_alone_gives_not_modified(fake: FakeFeeds, client: FeedClient) -> None:
    stamp = "Tue, 06 Oct 2026 08:00:00 GMT"
    fake.rss("/feed.xml", POSTS, last_modified=stamp)
    result = client.fetch(fake.url("/feed.xml"), last_modified=stamp)
    assert result.not_modified and result.last_modified == stamp
    assert fake.requests[-1].headers["if-modified-since"] == stamp
    assert "if-none-match" not in fake.requests[-1].headers


def test_a_changed_feed_returns_new_validators(fake: FakeFeeds, client: FeedClient) -> None:
    fake.rss("/feed.xml", POSTS[:1], etag='"v1"')
    client.fetch(fake.url("/feed.xml"))
    fake.rss("/feed.xml", POSTS, etag='"v2"')
    result = client.fetch(fake.url("/feed.xml"), etag='"v1"')
    assert not result.not_modified and result.etag == '"v2"' and len(result.entries) == 3


def test_redirects_are_followed_and_the_final_url_reported(
    fake: FakeFeeds, client: FeedClient
) -> None:
    fake.rss("/blog/rss.xml", POSTS)
    fake.route("/feed.xml", status=301, headers={"location": "/blog/rss.xml"})
    result = client.fetch(fake.url("/feed.xml"))
    assert result.url == fake.url("/blog/rss.xml") and len(result.entries) == 3


def test_github_releases_atom_gives_tags(fake: FakeFeeds, client: FeedClient) -> None:
    fake.github(
        "vllm-project/vllm",
        [
            GitHubRelease("v0.11.1rc2", datetime(2026, 10, 6, 12, 0, tzinfo=UTC), "v0.11.1rc2"),
            GitHubRelease(
                "v0.11.0",
                datetime(2026, 10, 1, 9, 30, tzinfo=PDT),
                "vLLM v0.11.0",
                "<h2>Highlights</h2><ul><li>Breaking: removed --foo</li></ul>",
            ),
        ],
    )
    url = github_atom_url(fake.base_url, "vllm-project/vllm", "releases")
    result = client.fetch_github_atom(url)
    assert [(t.tag, t.updated) for t in result.tags] == [
        ("v0.11.1rc2", datetime(2026, 10, 6, 12, 0, tzinfo=UTC)),
        ("v0.11.0", datetime(2026, 10, 1, 16, 30, tzinfo=UTC)),
    ]
    assert result.tags[1].link == "https://github.com/vllm-project/vllm/releases/tag/v0.11.0"
    assert result.tags[1].title == "vLLM v0.11.0"
    assert result.etag and result.etag.startswith('W/"')
    again = client.fetch_github_atom(url, etag=result.etag)
    assert again.not_modified and again.tags == ()


def test_github_tags_atom_keeps_tags_with_slashes(fake: FakeFeeds, client: FeedClient) -> None:
    fake.github(
        "NVIDIA/Megatron-LM",
        [GitHubRelease("core/v0.19.2", datetime(2026, 9, 1, tzinfo=UTC))],
        kind="tags",
    )
    result = client.fetch_github_atom(github_atom_url(fake.base_url, "NVIDIA/Megatron-LM", "tags"))
    assert [t.tag for t in result.tags] == ["core/v0.19.2"]


def test_billion_laughs_is_refused(fake: FakeFeeds, client: FeedClient) -> None:
    fake.route("/feed.xml", billion_laughs(), content_type="application/rss+xml")
    with pytest.raises(HostileFeed, match="entity declaration"):
        client.fetch(fake.url("/feed.xml"))


def test_external_entity_is_refused_and_never_fetched(
    fake: FakeFeeds, other: FakeFeeds, client: FeedClient
) -> None:
    other.route("/secret", b"TOP SECRET", content_type="text/plain")
    fake.route("/feed.xml", external_entity(other.url("/secret")))
    with pytest.raises(HostileFeed):
        client.fetch(fake.url("/feed.xml"))
    assert other.requests == []


def test_the_canary_host_would_see_a_parser_that_fetches(other: FakeFeeds) -> None:
    """The no-request assertions above mean something: a fetching parser is noticed."""
    other.route("/secret", b"TOP SECRET", content_type="text/plain")
    parser = xml.sax.make_parser()
    parser.setFeature(xml.sax.handler.feature_external_ges, True)
    parser.setContentHandler(xml.sax.handler.ContentHandler())
    parser.parse(io.BytesIO(external_entity(other.url("/secret"))))
    assert [r.path for r in other.requests] == ["/secret"]


def test_external_parameter_entity_is_refused_and_never_fetched(
    fake: FakeFeeds, other: FakeFeeds, client: FeedClient
) -> None:
    other.route("/remote.dtd", b'<!ENTITY x "y">', content_type="application/xml-dtd")
    fake.route("/feed.xml", parameter_entity(other.url("/remote.dtd")))
    with pytest.raises(HostileFeed):
        client.fetch(fake.url("/feed.xml"))
    assert other.requests == []


def test_external_dtd_is_never_fetched_but_the_feed_is_read(
    fake: FakeFeeds, other: FakeFeeds, client: FeedClient
) -> None:
    other.route("/rss-0.91.dtd", b'<!ENTITY x "y">', content_type="application/xml-dtd")
    fake.route("/feed.xml", external_dtd(other.url("/rss-0.91.dtd")))
    result = client.fetch(fake.url("/feed.xml"))
    assert [e.title for e in result.entries] == ["Hello"]
    assert other.requests == []


def test_entity_declarations_in_an_ill_formed_feed_are_refused() -> None:
    body = b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "b">]><rss><channel><title>&a;&bad'
    with pytest.raises(HostileFeed):
        parse_feed(body, url="https://example.org/feed", content_type="application/xml")


def test_ill_formed_feeds_without_declarations_are_still_read() -> None:
    body = (
        b'<rss version="2.0"><channel><title>Sloppy&nbsp;blog</title>'
        b"<item><title>Post</title><link>https://example.org/p</link></item></channel></rss>"
    )
    parsed = parse_feed(body, url="https://example.org/feed", content_type="text/xml")
    assert [e.link for e in parsed.entries] == ["https://example.org/p"]


def test_declared_oversized_body_is_refused(fake: FakeFeeds) -> None:
    fake.route("/big.xml", b"<rss>" + b" " * 300_000 + b"</rss>")
    with FeedClient(max_bytes=100_000) as client, pytest.raises(FeedTooLarge, match="cap"):
        client.fetch(fake.url("/big.xml"))


def test_undeclared_oversized_body_stops_reading_at_the_default_cap(fake: FakeFeeds) -> None:
    total = 6 * DEFAULT_MAX_BYTES
    fake.route(
        "/endless.xml",
        b"<!-- filler -->",
        stream_total=total,
        declare_length=False,
        content_type="application/rss+xml",
    )
    with FeedClient() as client, pytest.raises(FeedTooLarge, match="stopped reading"):
        client.fetch(fake.url("/endless.xml"))
    # The server stops once the client hangs up; socket buffers hold a few MB at most.
    assert fake.bytes_sent["/endless.xml"] < total


def test_html_page_is_not_a_feed(fake: FakeFeeds, client: FeedClient) -> None:
    fake.route("/blog/", HTML_PAGE, content_type="text/html; charset=utf-8")
    with pytest.raises(NotAFeed, match="HTML page"):
        client.fetch(fake.url("/blog/"))


def test_a_feed_served_as_html_is_still_read(fake: FakeFeeds, client: FeedClient) -> None:
    fake.route("/rss", rss_blog("B", "https://b.example/", POSTS), content_type="text/html")
    assert len(client.fetch(fake.url("/rss")).entries) == 3


def test_garbage_and_empty_bodies_are_not_feeds(fake: FakeFeeds, client: FeedClient) -> None:
    fake.route("/garbage", GARBAGE, content_type="application/octet-stream")
    fake.route("/empty", b"", content_type="application/rss+xml")
    fake.route("/sitemap.xml", b"<?xml version='1.0'?><urlset><url/></urlset>")
    with pytest.raises(NotAFeed, match="garbage"):
        client.fetch(fake.url("/garbage"))
    with pytest.raises(NotAFeed, match="empty"):
        client.fetch(fake.url("/empty"))
    with pytest.raises(NotAFeed, match="urlset"):
        client.fetch(fake.url("/sitemap.xml"))


def test_a_body_naming_a_local_file_is_never_opened() -> None:
    # feedparser.parse() opens a str/bytes that names a file; we hand it a stream.
    with pytest.raises(NotAFeed):
        parse_feed(b"/etc/hostname", url="https://example.org/feed", content_type="text/plain")


def test_wrong_content_types_are_refused(fake: FakeFeeds, client: FeedClient) -> None:
    fake.route("/api", b'{"items": []}', content_type="application/json")
    fake.route("/logo", b"\x89PNG\r\n", content_type="image/png")
    for path in ("/api", "/logo"):
        with pytest.raises(FeedContentTypeError, match="not as a feed"):
            client.fetch(fake.url(path))


@pytest.mark.parametrize("status", [403, 404, 410, 500, 503])
def test_error_statuses_raise_with_the_status(
    fake: FakeFeeds, client: FeedClient, status: int
) -> None:
    fake.rss("/feed.xml", POSTS)
    fake.fail_next("/feed.xml", status)
    with pytest.raises(FeedHTTPError, match=f"HTTP {status}") as raised:
        client.fetch(fake.url("/feed.xml"))
    assert raised.value.status == status
    assert len(client.fetch(fake.url("/feed.xml")).entries) == 3


def test_a_server_that_never_answers_times_out(fake: FakeFeeds) -> None:
    fake.rss("/slow.xml", POSTS, delay=5.0)
    with FeedClient(timeout=0.2) as client, pytest.raises(FeedTimeout):
        client.fetch(fake.url("/slow.xml"))


def test_a_body_dripping_in_slower_than_the_timeout_is_cut_off(fake: FakeFeeds) -> None:
    fake.route(
        "/drip.xml",
        b"<!-- drip -->",
        stream_total=1_000_000,
        chunk=512,
        drip=0.02,
        content_type="application/rss+xml",
    )
    # Every read is well within the timeout; the whole body is not.
    with FeedClient(timeout=0.3) as client, pytest.raises(FeedTimeout, match="within"):
        client.fetch(fake.url("/drip.xml"))


def test_refused_connection_is_a_connection_error(client: FeedClient) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(FeedConnectionError, match="connection failed"):
        client.fetch(f"http://127.0.0.1:{port}/feed.xml")


def test_one_bad_feed_does_not_stop_the_next(fake: FakeFeeds, client: FeedClient) -> None:
    fake.route("/laughs", billion_laughs())
    fake.route("/html", HTML_PAGE, content_type="text/html")
    fake.route("/garbage", GARBAGE)
    fake.fail_next("/down", 502)
    fake.rss("/good", POSTS)
    results: list[FeedResult] = []
    errors: dict[str, str] = {}
    for path in ("/laughs", "/html", "/garbage", "/down", "/good"):
        try:
            results.append(client.fetch(fake.url(path)))
        except FeedError as exc:
            errors[path] = str(exc)
    assert set(errors) == {"/laughs", "/html", "/garbage", "/down"}
    assert all(fake.url(path) in message for path, message in errors.items())
    assert len(results) == 1 and len(results[0].entries) == 3
