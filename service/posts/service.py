"""Blog feeds: keeping each feed's row, syncing its entries into posts, and the posts of a
window. A feed that fails is recorded on its row (last error, error count) and skipped."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from connectors.feeds import FeedClient, FeedError
from service.catalog import CatalogBlog
from service.database import transaction, utcnow
from service.normalize import clean_text
from service.posts.models import Feed, Post
from service.windows import Window, iso_utc

log = logging.getLogger(__name__)


def upsert_feed(session: Session, blog: CatalogBlog) -> Feed:
    feed = session.scalar(select(Feed).where(Feed.key == blog.key))
    if feed is None:
        feed = Feed(key=blog.key, name=blog.name, url=blog.url, error_count=0)
        session.add(feed)
    if feed.url != blog.url:
        feed.etag = feed.last_modified = None  # validators of another address mean nothing
    feed.name, feed.url, feed.site, feed.projects = (
        blog.name,
        blog.url,
        blog.site,
        list(blog.projects),
    )
    session.flush()
    return feed


def list_feeds(session: Session) -> list[Feed]:
    return list(session.scalars(select(Feed).order_by(Feed.key)))


def sync_feed(
    factory: sessionmaker[Session],
    client: FeedClient,
    key: str,
    clock: Callable[[], datetime] = utcnow,
) -> int:
    """Fetch one feed and store its new posts; returns how many were new (-1 on error)."""
    with factory() as session:
        feed = session.scalar(select(Feed).where(Feed.key == key))
        if feed is None:
            raise LookupError(f"no feed {key!r}")
        feed_id, url, etag, last_modified = feed.id, feed.url, feed.etag, feed.last_modified
    now = clock()
    try:
        result = client.fetch(url, etag=etag, last_modified=last_modified)
    except FeedError as exc:
        log.warning("feed %s (%s) failed: %s", key, url, exc)
        with transaction(factory) as session:
            feed = session.get(Feed, feed_id)
            assert feed is not None
            feed.last_checked_at = now
            feed.last_error = str(exc)[:2000]
            feed.error_count = (feed.error_count or 0) + 1
        return -1
    new = 0
    with transaction(factory) as session:
        feed = session.get(Feed, feed_id)
        assert feed is not None
        for entry in result.entries:
            link = (entry.link or "")[:1000] or None
            duplicate = session.scalar(
                select(Post.id).where(
                    Post.feed_id == feed_id,
                    or_(Post.dedupe_key == entry.dedupe_key[:1100], Post.link == link)
                    if link
                    else Post.dedupe_key == entry.dedupe_key[:1100],
                )
            )
            if duplicate is not None:
                continue
            session.add(
                Post(
                    feed_id=feed_id,
                    dedupe_key=entry.dedupe_key[:1100],
                    title=clean_text(entry.title, 1000) or "(untitled)",
                    link=link,
                    published_at=entry.published or now,
                    undated=entry.undated or entry.published is None,
                    first_seen_at=now,
                    summary=clean_text(entry.summary, 4000),
                    authors=[clean_text(a, 200) for a in entry.authors],
                    tags=[clean_text(t, 100) for t in entry.tags],
                )
            )
            session.flush()
            new += 1
        feed.etag, feed.last_modified = result.etag, result.last_modified
        feed.last_checked_at = feed.last_success_at = now
        feed.last_error = None
        feed.error_count = 0
    return new


def window_posts(session: Session, window: Window) -> list[tuple[Post, Feed]]:
    return list(
        session.execute(
            select(Post, Feed)
            .join(Feed, Feed.id == Post.feed_id)
            .where(Post.published_at >= window.start, Post.published_at < window.end)
            .order_by(Post.published_at)
        )
    )


def feed_json(feed: Feed) -> dict[str, Any]:
    return {
        "key": feed.key,
        "name": feed.name,
        "url": feed.url,
        "site": feed.site,
        "projects": feed.projects,
        "last_checked_at": iso_utc(feed.last_checked_at) if feed.last_checked_at else None,
        "last_success_at": iso_utc(feed.last_success_at) if feed.last_success_at else None,
        "last_error": feed.last_error,
        "error_count": feed.error_count or 0,
    }
