"""A local fake of the GitHub REST v3 API for tests.

A real HTTP server on 127.0.0.1 that answers with the shapes, headers, paging and
rate-limit behaviour described in GitHub's REST documentation, over an in-memory
model of repositories (a commit DAG with branches and tags, releases, pull requests).
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import heapq
import json
import math
import random
import re
import threading
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from tests.loopback import LoopbackServer, TrackedHandler

Timestamp = datetime | str

DOCS = "https://docs.github.com/rest"
RATE_LIMIT_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
SECONDARY_LIMIT_DOCS = f"{RATE_LIMIT_DOCS}#about-secondary-rate-limits"
_ROUTE_DOCS = {
    "repo": f"{DOCS}/repos/repos#get-a-repository",
    "releases": f"{DOCS}/releases/releases#list-releases",
    "latest": f"{DOCS}/releases/releases#get-the-latest-release",
    "release_by_tag": f"{DOCS}/releases/releases#get-a-release-by-tag-name",
    "pulls": f"{DOCS}/pulls/pulls#list-pull-requests",
    "pull": f"{DOCS}/pulls/pulls#get-a-pull-request",
    "compare": f"{DOCS}/commits/commits#compare-two-commits",
    "commits": f"{DOCS}/commits/commits#list-commits",
    "commit": f"{DOCS}/commits/commits#get-a-commit",
    "tags": f"{DOCS}/repos/repos#list-repository-tags",
}
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
COMPARE_UNPAGED_LIMIT = 250
_WEB_FEED = re.compile(r"^/(?P<owner>[^/]+)/(?P<repo>[^/]+)/(?P<kind>releases|tags)\.atom$")
RATE_WINDOW = timedelta(hours=1)
UNAUTHENTICATED_LIMIT = 60


def render_time(value: Timestamp | None) -> str | None:
    """GitHub's timestamp format for datetimes; strings are passed through verbatim."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Timestamp | None) -> datetime | None:
    """Aware datetime for ordering and filtering; None when the value cannot be read."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _order_key(value: Timestamp | None) -> float:
    parsed = parse_time(value)
    return parsed.timestamp() if parsed is not None else float("-inf")


def _node_id(kind: str, ident: str) -> str:
    return base64.b64encode(f"0{len(kind)}:{kind}{ident}".encode()).decode()


def _user_id(login: str) -> int:
    return zlib.crc32(login.encode()) % 100_000_000 + 1


def _natural_key(name: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name)]


def _int_param(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        return default


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    target = etag.removeprefix("W/")
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == target:
            return True
    return False


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    status: int
    request_headers: dict[str, str]
    cost: int
    authenticated: bool = False
    response_headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Commit:
    sha: str
    message: str
    parents: list[str]
    committed_at: Timestamp
    author: str
    seq: int
    when: datetime


@dataclass
class _Bucket:
    used: int = 0
    reset_at: datetime | None = None

    def touch(self, now: datetime) -> None:
        if self.reset_at is None or now >= self.reset_at:
            self.used = 0
            self.reset_at = now + RATE_WINDOW


@dataclass
class _Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Routed = tuple[int, Any, dict[str, str]]


def _error(status: int, message: str, doc: str = DOCS) -> Routed:
    return status, {"message": message, "documentation_url": doc, "status": str(status)}, {}


class FakeRepo:
    """One repository: commit DAG, branches, tags, releases and pull requests."""

    def __init__(self, gh: FakeGitHub, full_name: str, default_branch: str, repo_id: int) -> None:
        self._gh = gh
        self.full_name = full_name
        self.owner, self.name = full_name.split("/", 1)
        self.default_branch = default_branch
        self.id = repo_id
        self.description: str | None = None
        self.created_at: Timestamp = gh.now()
        self.commits: dict[str, _Commit] = {}
        self.branches: dict[str, str] = {}
        self.tags: dict[str, str] = {}
        self.releases: list[dict[str, Any]] = []
        self.pulls: dict[int, dict[str, Any]] = {}
        self._seq = 0
        self._next_release_id = repo_id * 1000 + 1

    def commit(
        self,
        message: str,
        *,
        branch: str | None = None,
        parents: list[str] | None = None,
        committed_at: Timestamp | None = None,
        author: str = "dev",
    ) -> str:
        """Create a commit on `branch` (default branch) and move that branch to it.

        Parents default to the branch's current head; a branch with no head yet gets a
        root commit.
        """
        with self._gh._lock:
            branch = branch or self.default_branch
            if parents is None:
                head = self.branches.get(branch)
                parent_shas = [head] if head else []
            else:
                parent_shas = [self.resolve(p) for p in parents]
            stamp = committed_at if committed_at is not None else self._gh.now()
            self._seq += 1
            seed = "\0".join(
                [
                    self.full_name,
                    message,
                    ",".join(parent_shas),
                    str(render_time(stamp)),
                    author,
                    str(self._seq),
                ]
            )
            sha = hashlib.sha1(seed.encode()).hexdigest()
            self.commits[sha] = _Commit(
                sha=sha,
                message=message,
                parents=parent_shas,
                committed_at=stamp,
                author=author,
                seq=self._seq,
                when=parse_time(stamp) or self._gh.now(),
            )
            self.branches[branch] = sha
            return sha

    def create_branch(self, name: str, from_ref: str) -> None:
        with self._gh._lock:
            self.branches[name] = self.resolve(from_ref)

    def cherry_pick(
        self,
        sha: str,
        *,
        branch: str,
        message: str | None = None,
        committed_at: Timestamp | None = None,
    ) -> str:
        with self._gh._lock:
            original = self.commits[self.resolve(sha)]
            return self.commit(
                message if message is not None else original.message,
                branch=branch,
                committed_at=committed_at,
                author=original.author,
            )

    def tag(self, name: str, ref: str) -> str:
        with self._gh._lock:
            sha = self.resolve(ref)
            self.tags[name] = sha
            return sha

    def resolve(self, ref: str) -> str:
        """Sha for a branch, tag, full or abbreviated sha; KeyError if unknown."""
        sha = self._lookup(ref)
        if sha is None:
            raise KeyError(f"unknown ref {ref!r} in {self.full_name}")
        return sha

    def head(self, branch: str | None = None) -> str:
        return self.branches[branch or self.default_branch]

    def release(
        self,
        tag: str,
        *,
        name: str | None = None,
        body: str = "",
        prerelease: bool = False,
        draft: bool = False,
        published_at: Timestamp | None = None,
        created_at: Timestamp | None = None,
        target: str | None = None,
        author: str = "dev",
    ) -> dict[str, Any]:
        """Create a release, tagging `target` (or the default branch head) if the tag is new.

        created_at defaults to the tagged commit's date, as GitHub documents for releases;
        published_at defaults to now(), or null for drafts.
        """
        with self._gh._lock:
            if any(r["tag_name"] == tag for r in self.releases):
                raise ValueError(f"release for tag {tag!r} already exists")
            if tag not in self.tags:
                self.tag(tag, target or self.default_branch)
            tagged = self.commits[self.tags[tag]]
            record: dict[str, Any] = {
                "id": self._next_release_id,
                "tag_name": tag,
                "target_commitish": target or self.default_branch,
                "name": name,
                "body": body,
                "draft": draft,
                "prerelease": prerelease,
                "created_at": created_at if created_at is not None else tagged.committed_at,
                "published_at": published_at
                if published_at is not None
                else (None if draft else self._gh.now()),
                "updated_at": None,
                "author": author,
            }
            self._next_release_id += 1
            self.releases.append(record)
            return self._render_release(record)

    def edit_release(self, tag: str, **fields: Any) -> dict[str, Any]:
        with self._gh._lock:
            record = self._release_record(tag)
            record.update(fields)
            if "updated_at" not in fields:
                record["updated_at"] = self._gh.now()
            return self._render_release(record)

    def delete_release(self, tag: str) -> None:
        with self._gh._lock:
            self.releases.remove(self._release_record(tag))

    def _release_record(self, tag: str) -> dict[str, Any]:
        for record in self.releases:
            if record["tag_name"] == tag:
                return record
        raise KeyError(f"no release for tag {tag!r} in {self.full_name}")

    def pull(
        self,
        number: int,
        *,
        title: str,
        body: str | None = "",
        merged_at: Timestamp | None = None,
        merge_commit_sha: str | None = None,
        base: str = "main",
        head_ref: str = "feature",
        labels: Sequence[str] = (),
        user: str = "dev",
        state: str = "closed",
        created_at: Timestamp | None = None,
        updated_at: Timestamp | None = None,
        closed_at: Timestamp | None = None,
        draft: bool = False,
        comments: int = 0,
    ) -> dict[str, Any]:
        """Create or replace PR `number`.

        closed_at defaults to merged_at (or now()) for closed PRs; updated_at defaults to
        the latest of created/closed/merged.
        """
        with self._gh._lock:
            now = self._gh.now()
            created = created_at if created_at is not None else now
            if closed_at is None and state == "closed":
                closed_at = merged_at if merged_at is not None else now
            if updated_at is None:
                events = [t for t in (created, closed_at, merged_at) if t is not None]
                updated_at = max(events, key=_order_key)
            record: dict[str, Any] = {
                "number": number,
                "id": self.id * 10_000 + number,
                "title": title,
                "body": body,
                "state": state,
                "merged_at": merged_at,
                "merge_commit_sha": merge_commit_sha,
                "base": base,
                "head_ref": head_ref,
                "head_sha": hashlib.sha1(
                    f"{self.full_name}#{number}:{head_ref}".encode()
                ).hexdigest(),
                "labels": list(labels),
                "user": user,
                "created_at": created,
                "updated_at": updated_at,
                "closed_at": closed_at,
                "draft": draft,
                "comments": comments,
                "locked": False,
            }
            self.pulls[number] = record
            return self._render_pull(record)

    def merge_pull(
        self,
        number: int,
        title: str,
        *,
        merged_at: Timestamp,
        base: str | None = None,
        labels: Sequence[str] = (),
        body: str = "",
        user: str = "dev",
    ) -> str:
        """Squash-merge: commit "{title} (#{number})" on base plus a merged PR record."""
        with self._gh._lock:
            base = base or self.default_branch
            sha = self.commit(
                f"{title} (#{number})", branch=base, committed_at=merged_at, author=user
            )
            self.pull(
                number,
                title=title,
                body=body,
                merged_at=merged_at,
                merge_commit_sha=sha,
                base=base,
                head_ref=f"pr-{number}",
                labels=labels,
                user=user,
                state="closed",
                created_at=merged_at,
                closed_at=merged_at,
            )
            return sha

    def update_pull(self, number: int, **fields: Any) -> dict[str, Any]:
        with self._gh._lock:
            record = self.pulls[number]
            record.update(fields)
            if "updated_at" not in fields:
                record["updated_at"] = self._gh.now()
            return self._render_pull(record)

    def _lookup(self, ref: str) -> str | None:
        for prefix, table in (
            ("refs/heads/", self.branches),
            ("heads/", self.branches),
            ("refs/tags/", self.tags),
            ("tags/", self.tags),
        ):
            if ref.startswith(prefix) and ref[len(prefix) :] in table:
                return table[ref[len(prefix) :]]
        if ref in self.branches:
            return self.branches[ref]
        if ref in self.tags:
            return self.tags[ref]
        lowered = ref.lower()
        if lowered in self.commits:
            return lowered
        if 4 <= len(lowered) < 40 and re.fullmatch(r"[0-9a-f]+", lowered):
            matches = [sha for sha in self.commits if sha.startswith(lowered)]
            if len(matches) == 1:
                return matches[0]
        return None

    def _ancestors(self, shas: Iterable[str]) -> set[str]:
        seen: set[str] = set()
        stack = list(shas)
        while stack:
            sha = stack.pop()
            if sha not in seen:
                seen.add(sha)
                stack.extend(self.commits[sha].parents)
        return seen

    def _merge_base(self, base: str, head: str) -> str | None:
        common = self._ancestors([base]) & self._ancestors([head])
        if not common:
            return None
        shadowed = self._ancestors(p for sha in common for p in self.commits[sha].parents)
        best = common - shadowed
        return max(best, key=lambda sha: (self.commits[sha].when, self.commits[sha].seq))

    def _chronological(self, shas: set[str]) -> list[str]:
        """Parents before children; among ready commits, oldest (date, then creation) first."""
        children: dict[str, list[str]] = {sha: [] for sha in shas}
        waiting: dict[str, int] = {}
        for sha in shas:
            inside = [p for p in self.commits[sha].parents if p in shas]
            waiting[sha] = len(inside)
            for parent in inside:
                children[parent].append(sha)
        ready = [(self.commits[s].when, self.commits[s].seq, s) for s in shas if waiting[s] == 0]
        heapq.heapify(ready)
        ordered: list[str] = []
        while ready:
            _, _, sha = heapq.heappop(ready)
            ordered.append(sha)
            for child in children[sha]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    heapq.heappush(
                        ready, (self.commits[child].when, self.commits[child].seq, child)
                    )
        return ordered

    @property
    def _api(self) -> str:
        return f"{self._gh.base_url}/repos/{self.full_name}"

    @property
    def _web(self) -> str:
        return f"{self._gh.web_url}/{self.full_name}"

    def _render_repo(self) -> dict[str, Any]:
        api, web = self._api, self._web
        host = self._gh.web_url.split("://", 1)[-1]
        pushed = max(
            (c.committed_at for c in self.commits.values()), key=_order_key, default=self.created_at
        )
        return {
            "id": self.id,
            "node_id": _node_id("Repository", str(self.id)),
            "name": self.name,
            "full_name": self.full_name,
            "private": False,
            "owner": self._gh._user(self.owner),
            "html_url": web,
            "description": self.description,
            "fork": False,
            "url": api,
            "forks_url": f"{api}/forks",
            "keys_url": f"{api}/keys{{/key_id}}",
            "collaborators_url": f"{api}/collaborators{{/collaborator}}",
            "teams_url": f"{api}/teams",
            "hooks_url": f"{api}/hooks",
            "issue_events_url": f"{api}/issues/events{{/number}}",
            "events_url": f"{api}/events",
            "assignees_url": f"{api}/assignees{{/user}}",
            "branches_url": f"{api}/branches{{/branch}}",
            "tags_url": f"{api}/tags",
            "blobs_url": f"{api}/git/blobs{{/sha}}",
            "git_tags_url": f"{api}/git/tags{{/sha}}",
            "git_refs_url": f"{api}/git/refs{{/sha}}",
            "trees_url": f"{api}/git/trees{{/sha}}",
            "statuses_url": f"{api}/statuses/{{sha}}",
            "languages_url": f"{api}/languages",
            "stargazers_url": f"{api}/stargazers",
            "contributors_url": f"{api}/contributors",
            "subscribers_url": f"{api}/subscribers",
            "subscription_url": f"{api}/subscription",
            "commits_url": f"{api}/commits{{/sha}}",
            "git_commits_url": f"{api}/git/commits{{/sha}}",
            "comments_url": f"{api}/comments{{/number}}",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "compare_url": f"{api}/compare/{{base}}...{{head}}",
            "merges_url": f"{api}/merges",
            "archive_url": f"{api}/{{archive_format}}{{/ref}}",
            "downloads_url": f"{api}/downloads",
            "issues_url": f"{api}/issues{{/number}}",
            "pulls_url": f"{api}/pulls{{/number}}",
            "milestones_url": f"{api}/milestones{{/number}}",
            "notifications_url": f"{api}/notifications{{?since,all,participating}}",
            "labels_url": f"{api}/labels{{/name}}",
            "releases_url": f"{api}/releases{{/id}}",
            "deployments_url": f"{api}/deployments",
            "created_at": render_time(self.created_at),
            "updated_at": render_time(pushed),
            "pushed_at": render_time(pushed),
            "git_url": f"git://{host}/{self.full_name}.git",
            "ssh_url": f"git@{host}:{self.full_name}.git",
            "clone_url": f"{web}.git",
            "svn_url": web,
            "homepage": None,
            "size": len(self.commits),
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": None,
            "has_issues": True,
            "has_projects": True,
            "has_downloads": True,
            "has_wiki": True,
            "has_pages": False,
            "has_discussions": False,
            "forks_count": 0,
            "mirror_url": None,
            "archived": False,
            "disabled": False,
            "open_issues_count": sum(1 for p in self.pulls.values() if p["state"] == "open"),
            "license": None,
            "allow_forking": True,
            "is_template": False,
            "web_commit_signoff_required": False,
            "topics": [],
            "visibility": "public",
            "forks": 0,
            "open_issues": sum(1 for p in self.pulls.values() if p["state"] == "open"),
            "watchers": 0,
            "default_branch": self.default_branch,
            "network_count": 0,
            "subscribers_count": 0,
        }

    def _render_commit(self, sha: str, *, detailed: bool = False) -> dict[str, Any]:
        c = self.commits[sha]
        signature = {
            "name": c.author,
            "email": f"{c.author}@users.noreply.github.com",
            "date": render_time(c.committed_at),
        }
        tree = hashlib.sha1(f"tree:{sha}".encode()).hexdigest()
        rendered: dict[str, Any] = {
            "url": f"{self._api}/commits/{sha}",
            "sha": sha,
            "node_id": _node_id("Commit", f"{self.id}:{sha}"),
            "html_url": f"{self._web}/commit/{sha}",
            "comments_url": f"{self._api}/commits/{sha}/comments",
            "commit": {
                "url": f"{self._api}/git/commits/{sha}",
                "author": signature,
                "committer": dict(signature),
                "message": c.message,
                "tree": {"sha": tree, "url": f"{self._api}/git/trees/{tree}"},
                "comment_count": 0,
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "author": self._gh._user(c.author),
            "committer": self._gh._user(c.author),
            "parents": [
                {"sha": p, "url": f"{self._api}/commits/{p}", "html_url": f"{self._web}/commit/{p}"}
                for p in c.parents
            ],
        }
        if detailed:
            rendered["stats"] = {"total": 0, "additions": 0, "deletions": 0}
            rendered["files"] = []
        return rendered

    def _render_release(self, record: dict[str, Any]) -> dict[str, Any]:
        rid, tag = record["id"], record["tag_name"]
        api = f"{self._api}/releases/{rid}"
        updated = record["updated_at"] or record["published_at"] or record["created_at"]
        return {
            "url": api,
            "assets_url": f"{api}/assets",
            "upload_url": f"https://uploads.github.com/repos/{self.full_name}/releases/{rid}/assets{{?name,label}}",
            "html_url": f"{self._web}/releases/tag/{quote(tag)}",
            "id": rid,
            "author": self._gh._user(record["author"]),
            "node_id": _node_id("Release", str(rid)),
            "tag_name": tag,
            "target_commitish": record["target_commitish"],
            "name": record["name"],
            "draft": record["draft"],
            "immutable": False,
            "prerelease": record["prerelease"],
            "created_at": render_time(record["created_at"]),
            "updated_at": render_time(updated),
            "published_at": render_time(record["published_at"]),
            "assets": [],
            "tarball_url": f"{self._api}/tarball/{quote(tag)}",
            "zipball_url": f"{self._api}/zipball/{quote(tag)}",
            "body": record["body"],
        }

    def _atom(self, kind: str) -> str:
        """The newest ten releases (or tags) as GitHub's Atom feed shows them."""
        web = self._web
        if kind == "releases":
            records = sorted(
                (r for r in self.releases if not r["draft"]),
                key=lambda r: _order_key(r["created_at"]),
                reverse=True,
            )[:10]
            entries = [
                (
                    r["tag_name"],
                    r["updated_at"] or r["published_at"] or r["created_at"],
                    r["name"] or r["tag_name"],
                    r["body"] or "",
                )
                for r in records
            ]
        else:
            tags = sorted(self.tags, key=lambda t: self.commits[self.tags[t]].when, reverse=True)[
                :10
            ]
            entries = [(t, self.commits[self.tags[t]].committed_at, t, "") for t in tags]
        updated = render_time(entries[0][1]) if entries else render_time(self._gh.now())
        parts = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:lang="en-US">',
            f"  <id>tag:github.com,2008:https://github.com/{self.full_name}/{kind}</id>",
            f'  <link type="text/html" rel="alternate" href="{web}/{kind}"/>',
            f'  <link type="application/atom+xml" rel="self" href="{web}/{kind}.atom"/>',
            f"  <title>{'Release notes' if kind == 'releases' else 'Tags'} from {self.full_name.split('/')[1]}</title>",
            f"  <updated>{updated}</updated>",
        ]
        for tag, when, title, body in entries:
            escaped = body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            parts += [
                "  <entry>",
                f"    <id>tag:github.com,2008:Repository/{self.id}/{tag}</id>",
                f"    <updated>{render_time(when)}</updated>",
                f'    <link rel="alternate" type="text/html" href="{web}/releases/tag/{quote(tag)}"/>',
                f"    <title>{title.replace('&', '&amp;').replace('<', '&lt;')}</title>",
                f'    <content type="html">{escaped}</content>',
                "    <author><name>dev</name></author>",
                "  </entry>",
            ]
        parts.append("</feed>")
        return "\n".join(parts)

    def _render_label(self, name: str) -> dict[str, Any]:
        lid = zlib.crc32(f"{self.full_name}:{name}".encode())
        return {
            "id": lid,
            "node_id": _node_id("Label", str(lid)),
            "url": f"{self._api}/labels/{quote(name)}",
            "name": name,
            "description": None,
            "color": "ededed",
            "default": False,
        }

    def _render_pull(self, record: dict[str, Any], *, detailed: bool = False) -> dict[str, Any]:
        number = record["number"]
        api, issue_api = f"{self._api}/pulls/{number}", f"{self._api}/issues/{number}"
        html = f"{self._web}/pull/{number}"
        repo_obj = self._render_repo()
        owner = self._gh._user(self.owner)
        base_sha = self.branches.get(record["base"], "0" * 40)
        rendered: dict[str, Any] = {
            "url": api,
            "id": record["id"],
            "node_id": _node_id("PullRequest", str(record["id"])),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_api,
            "commits_url": f"{api}/commits",
            "review_comments_url": f"{api}/comments",
            "review_comment_url": f"{self._api}/pulls/comments{{/number}}",
            "comments_url": f"{issue_api}/comments",
            "statuses_url": f"{self._api}/statuses/{record['head_sha']}",
            "number": number,
            "state": record["state"],
            "locked": record["locked"],
            "title": record["title"],
            "user": self._gh._user(record["user"]),
            "body": record["body"],
            "labels": [self._render_label(name) for name in record["labels"]],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": render_time(record["created_at"]),
            "updated_at": render_time(record["updated_at"]),
            "closed_at": render_time(record["closed_at"]),
            "merged_at": render_time(record["merged_at"]),
            "merge_commit_sha": record["merge_commit_sha"],
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": {
                "label": f"{self.owner}:{record['head_ref']}",
                "ref": record["head_ref"],
                "sha": record["head_sha"],
                "user": owner,
                "repo": repo_obj,
            },
            "base": {
                "label": f"{self.owner}:{record['base']}",
                "ref": record["base"],
                "sha": base_sha,
                "user": owner,
                "repo": repo_obj,
            },
            "_links": {
                "self": {"href": api},
                "html": {"href": html},
                "issue": {"href": issue_api},
                "comments": {"href": f"{issue_api}/comments"},
                "review_comments": {"href": f"{api}/comments"},
                "review_comment": {"href": f"{self._api}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/commits"},
                "statuses": {"href": f"{self._api}/statuses/{record['head_sha']}"},
            },
            "author_association": "CONTRIBUTOR",
            "auto_merge": None,
            "draft": record["draft"],
        }
        if detailed:
            merged = record["merged_at"] is not None
            rendered.update(
                {
                    "merged": merged,
                    "mergeable": None if merged else True,
                    "rebaseable": None if merged else True,
                    "mergeable_state": "unknown" if merged else "clean",
                    "merged_by": self._gh._user(record["user"]) if merged else None,
                    "comments": record["comments"],
                    "review_comments": 0,
                    "maintainer_can_modify": False,
                    "commits": 1,
                    "additions": 0,
                    "deletions": 0,
                    "changed_files": 0,
                }
            )
        return rendered

    def _render_tag(self, name: str) -> dict[str, Any]:
        sha = self.tags[name]
        return {
            "name": name,
            "zipball_url": f"{self._api}/zipball/refs/tags/{quote(name)}",
            "tarball_url": f"{self._api}/tarball/refs/tags/{quote(name)}",
            "commit": {"sha": sha, "url": f"{self._api}/commits/{sha}"},
            "node_id": _node_id("Ref", f"{self.id}:refs/tags/{name}"),
        }


class _Server(LoopbackServer):
    fake: FakeGitHub

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        super().__init__(_Handler)


class _Handler(TrackedHandler):
    server_version = "github.com"
    server: _Server

    def do_GET(self) -> None:
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

    def _serve(self, *, send_body: bool) -> None:
        length = _int_param(self.headers.get("Content-Length"), 0)
        if length > 0:
            self.rfile.read(length)
        headers = {key.lower(): value for key, value in self.headers.items()}
        fake = self.server.fake
        with fake._lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            response = fake._dispatch(self.command, self.path, headers)
            if fake.latency > 0:
                time.sleep(fake.latency)
        finally:
            with fake._lock:
                fake.in_flight -= 1
        self.send_response(response.status)
        for key, value in response.headers.items():
            self.send_header(key, value)
        if response.status not in (204, 304):
            self.send_header("content-length", str(len(response.body)))
        self.end_headers()
        if send_body and response.body and response.status not in (204, 304):
            self.wfile.write(response.body)

    def date_time_string(self, timestamp: float | None = None) -> str:
        return email.utils.formatdate(self.server.fake.now().timestamp(), usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FakeGitHub:
    """Fake api.github.com; see the module docstring."""

    def __init__(
        self, *, token: str | None = None, rate_limit: int = 5000, fault_seed: int = 0
    ) -> None:
        self.token = token
        self.rate_limit = rate_limit
        self.unauthenticated_rate_limit = UNAUTHENTICATED_LIMIT
        self.fault_seed = fault_seed
        self.fail_rate: float = 0.0
        self.secondary_limit_every: int | None = None
        self.latency = 0.0  # seconds added to every response (real wall-clock time)
        self.in_flight = 0
        self.max_in_flight = 0  # most requests being answered at the same moment
        self.rate_limited_status = 403
        self.web_url = "https://github.com"
        self.login = "dev"
        self.link_style = "repositories"
        self.api_versions = {"2022-11-28", "2026-03-10"}
        self.base_url = ""
        self.requests: list[RecordedRequest] = []
        self._lock = threading.RLock()
        self._now = datetime.now(UTC).replace(microsecond=0)
        self._rng = random.Random(fault_seed)
        self._fail_queue: list[tuple[int, dict[str, str], str | None]] = []
        self._repos: dict[str, FakeRepo] = {}
        self._next_repo_id = 1_296_269
        self._auth_bucket = _Bucket()
        self._anon_bucket = _Bucket()
        self._request_counter = 0
        self._server: _Server | None = None

    def start(self) -> str:
        if self._server is None:
            self._server = _Server(self)
            self.base_url = self._server.start("fake-github")
        return self.base_url

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> FakeGitHub:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def now(self) -> datetime:
        return self._now

    def set_time(self, when: datetime) -> None:
        with self._lock:
            self._now = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
            self._refill_due()

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            self._refill_due()

    def _refill_due(self) -> None:
        for bucket in (self._auth_bucket, self._anon_bucket):
            if bucket.reset_at is not None and self._now >= bucket.reset_at:
                bucket.used = 0
                bucket.reset_at = None

    def fail_next(
        self,
        status: int,
        count: int = 1,
        headers: dict[str, str] | None = None,
        body: str | None = None,
    ) -> None:
        with self._lock:
            self._fail_queue.extend([(status, dict(headers or {}), body)] * count)

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    def rate_remaining(self, *, authenticated: bool = True) -> int:
        with self._lock:
            bucket, limit = self._bucket(authenticated)
            return max(0, limit - bucket.used)

    def repo(self, full_name: str, default_branch: str = "main") -> FakeRepo:
        with self._lock:
            key = full_name.lower()
            if key not in self._repos:
                self._repos[key] = FakeRepo(self, full_name, default_branch, self._next_repo_id)
                self._next_repo_id += 1
            return self._repos[key]

    def remove_repo(self, full_name: str) -> None:
        with self._lock:
            del self._repos[full_name.lower()]

    def _user(self, login: str) -> dict[str, Any]:
        uid = _user_id(login)
        api = f"{self.base_url}/users/{login}"
        return {
            "login": login,
            "id": uid,
            "node_id": _node_id("User", str(uid)),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": f"{self.web_url}/{login}",
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "user_view_type": "public",
            "site_admin": False,
        }

    def _bucket(self, authenticated: bool) -> tuple[_Bucket, int]:
        if authenticated:
            return self._auth_bucket, self.rate_limit
        return self._anon_bucket, self.unauthenticated_rate_limit

    def _auth_state(self, headers: dict[str, str]) -> str:
        value = headers.get("authorization")
        if not value:
            return "none"
        scheme, _, credential = value.strip().partition(" ")
        if scheme.lower() not in ("bearer", "token") or not credential.strip():
            return "bad"
        if self.token is not None and credential.strip() != self.token:
            return "bad"
        return "ok"

    def _request_id(self, number: int) -> str:
        digest = hashlib.sha1(f"{self.fault_seed}:{number}".encode()).hexdigest().upper()
        return f"{digest[0:4]}:{digest[4:8]}:{digest[8:14]}:{digest[14:20]}:{digest[20:28]}"

    def _dispatch(self, method: str, raw_path: str, headers: dict[str, str]) -> _Response:
        with self._lock:
            split = urlsplit(raw_path)
            path = unquote(split.path)
            query = dict(parse_qsl(split.query, keep_blank_values=True))
            web_feed = _WEB_FEED.match(path)
            if web_feed is not None and method in ("GET", "HEAD"):
                return self._web_feed(web_feed, path, query, headers)
            self._request_counter += 1
            request_id = self._request_id(self._request_counter)
            auth = self._auth_state(headers)
            authenticated = auth == "ok"
            bucket, limit = self._bucket(authenticated)
            bucket.touch(self._now)

            response = self._fault(self._request_counter, request_id)
            cost = 0
            if response is None:
                response, cost = self._handle(method, path, query, headers, auth, bucket, limit)
            bucket.used += cost

            assert bucket.reset_at is not None
            visibility = "private" if authenticated else "public"
            final = {
                "content-type": "application/json; charset=utf-8",
                "x-github-media-type": "github.v3; format=json",
                "x-ratelimit-limit": str(limit),
                "x-ratelimit-remaining": str(max(0, limit - bucket.used)),
                "x-ratelimit-reset": str(int(bucket.reset_at.timestamp())),
                "x-ratelimit-used": str(bucket.used),
                "x-ratelimit-resource": "core",
                "x-github-request-id": request_id,
                "cache-control": f"{visibility}, max-age=60, s-maxage=60",
                "vary": "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding",
                "x-content-type-options": "nosniff",
                "access-control-allow-origin": "*",
                "access-control-expose-headers": (
                    "ETag, Link, Location, Retry-After, X-GitHub-OTP, X-RateLimit-Limit, "
                    "X-RateLimit-Remaining, X-RateLimit-Used, X-RateLimit-Resource, "
                    "X-RateLimit-Reset, X-OAuth-Scopes, X-Accepted-OAuth-Scopes, X-Poll-Interval, "
                    "X-GitHub-Media-Type, X-GitHub-SSO, X-GitHub-Request-Id, Deprecation, Sunset"
                ),
            }
            if "x-github-api-version" in headers:
                final["x-github-api-version-selected"] = headers["x-github-api-version"]
            if response.status in (204, 304):
                del final["content-type"]
            final.update({key.lower(): value for key, value in response.headers.items()})
            response.headers = final

            self.requests.append(
                RecordedRequest(
                    method=method,
                    path=path,
                    query=query,
                    status=response.status,
                    request_headers=dict(headers),
                    cost=cost,
                    authenticated=authenticated,
                    response_headers=dict(final),
                )
            )
            return response

    def _web_feed(
        self, match: re.Match[str], path: str, query: dict[str, str], headers: dict[str, str]
    ) -> _Response:
        """github.com's ``/{owner}/{repo}/releases.atom`` and ``tags.atom``: web pages, so
        they spend no API quota and carry no rate-limit headers; conditional GET works."""
        repo = self._repos.get(f"{match.group('owner')}/{match.group('repo')}".lower())
        if repo is None:
            response = _Response(404, b"Not Found", {"content-type": "text/plain"})
        else:
            body = repo._atom(match.group("kind")).encode()
            etag = f'W/"{hashlib.sha256(body).hexdigest()[:32]}"'
            response_headers = {
                "content-type": "application/atom+xml; charset=utf-8",
                "etag": etag,
                "cache-control": "max-age=0, private, must-revalidate",
            }
            if _etag_matches(headers.get("if-none-match"), etag):
                response = _Response(304, b"", response_headers)
            else:
                response = _Response(200, body, response_headers)
        self.requests.append(
            RecordedRequest(
                method="GET",
                path=path,
                query=query,
                status=response.status,
                request_headers=dict(headers),
                cost=0,
                authenticated=False,
                response_headers=dict(response.headers),
            )
        )
        return response

    def _fault(self, number: int, request_id: str) -> _Response | None:
        if self._fail_queue:
            status, headers, body = self._fail_queue.pop(0)
            if body is None:
                try:
                    phrase = HTTPStatus(status).phrase
                except ValueError:
                    phrase = "Error"
                body = "" if status in (204, 304) else json.dumps({"message": phrase})
            return _Response(status, body.encode(), headers)
        if self.secondary_limit_every and number % self.secondary_limit_every == 0:
            message = (
                "You have exceeded a secondary rate limit. Please wait a few minutes before you "
                "try again. If you reach out to GitHub Support for help, please include the "
                f"request ID {request_id}."
            )
            body = {"message": message, "documentation_url": SECONDARY_LIMIT_DOCS, "status": "403"}
            return _Response(403, json.dumps(body).encode(), {"retry-after": "60"})
        if self.fail_rate > 0 and self._rng.random() < self.fail_rate:
            status = self._rng.choice((502, 503))
            message = "Server Error" if status == 502 else "Service Unavailable"
            return _Response(status, json.dumps({"message": message}).encode())
        return None

    def _handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        auth: str,
        bucket: _Bucket,
        limit: int,
    ) -> tuple[_Response, int]:
        if auth == "bad":
            return self._json(*_error(401, "Bad credentials")), 1
        version = headers.get("x-github-api-version")
        if version is not None and version not in self.api_versions:
            newest, *older = sorted(self.api_versions, reverse=True)
            supported = ", ".join([f'"{newest}" (most recent)', *(f'"{v}"' for v in older)])
            message = (
                'The version you specified in the "X-GitHub-API-Version" request header, '
                f'"{version}", is not a supported version. The following versions are '
                f"currently supported: {supported}."
            )
            return self._json(*_error(400, message)), 0
        authenticated = auth == "ok"
        if path == "/rate_limit" and method in ("GET", "HEAD"):
            body = self._rate_limit_body(authenticated)
            return self._conditional(self._json(200, body, {}), headers, authenticated, 0)
        if limit - bucket.used <= 0:
            if authenticated:
                message = f"API rate limit exceeded for user ID {_user_id(self.login)}."
            else:
                message = (
                    "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                    "Authenticated requests get a higher rate limit. Check out the documentation "
                    "for more details.)"
                )
            return self._json(*_error(self.rate_limited_status, message, RATE_LIMIT_DOCS)), 0
        if method not in ("GET", "HEAD"):
            return self._json(*_error(404, "Not Found")), 1
        status, payload, extra = self._route(path, query, authenticated)
        return self._conditional(self._json(status, payload, extra), headers, authenticated, 1)

    @staticmethod
    def _conditional(
        response: _Response, headers: dict[str, str], authenticated: bool, cost: int
    ) -> tuple[_Response, int]:
        if response.status != 200:
            return response, cost
        etag = 'W/"' + hashlib.sha256(response.body).hexdigest() + '"'
        response.headers["etag"] = etag
        if not _etag_matches(headers.get("if-none-match"), etag):
            return response, cost
        kept = {key: value for key, value in response.headers.items() if key != "content-type"}
        # GitHub: a 304 is free only when the request was correctly authorized.
        return _Response(304, b"", kept), 0 if authenticated else cost

    def _json(self, status: int, payload: Any, headers: dict[str, str]) -> _Response:
        body = json.dumps(payload, ensure_ascii=False).encode()
        return _Response(
            status, body, {"content-type": "application/json; charset=utf-8", **headers}
        )

    def _rate_limit_body(self, authenticated: bool) -> dict[str, Any]:
        bucket, limit = self._bucket(authenticated)
        assert bucket.reset_at is not None
        core = {
            "limit": limit,
            "used": bucket.used,
            "remaining": max(0, limit - bucket.used),
            "reset": int(bucket.reset_at.timestamp()),
        }

        def unused(size: int, window: int) -> dict[str, int]:
            return {
                "limit": size,
                "used": 0,
                "remaining": size,
                "reset": int(self._now.timestamp()) + window,
            }

        resources = {
            "core": core,
            "search": unused(30 if authenticated else 10, 60),
            "graphql": unused(5000 if authenticated else 0, 3600),
            "integration_manifest": unused(5000, 3600),
            "code_search": unused(10, 60),
        }
        return {"resources": resources, "rate": dict(core)}

    def _find_repo(self, path: str) -> tuple[FakeRepo | None, str, str]:
        """(repo, remainder of the path, link prefix) for /repos/o/r/... or /repositories/id/..."""
        match = re.fullmatch(r"/repositories/(\d+)(/.*)?", path)
        if match:
            repo_id = int(match.group(1))
            found = next((r for r in self._repos.values() if r.id == repo_id), None)
            return found, match.group(2) or "", path[: match.end(1)]
        match = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if match:
            found = self._repos.get(f"{match.group(1)}/{match.group(2)}".lower())
            return found, match.group(3) or "", path[: match.end(2)]
        return None, "", ""

    def _route(self, path: str, query: dict[str, str], authenticated: bool) -> Routed:
        repo, rest, prefix = self._find_repo(path)
        if not prefix:
            return _error(404, "Not Found")
        doc = self._doc_for(rest)
        if repo is None:
            return _error(404, "Not Found", doc)
        if self.link_style == "repositories":
            prefix = f"/repositories/{repo.id}"
        else:
            prefix = f"/repos/{repo.full_name}"
        link_path = prefix + rest

        if rest == "":
            return 200, repo._render_repo(), {}
        if rest == "/releases":
            show_drafts = authenticated and self.token is not None
            visible = [r for r in repo.releases if show_drafts or not r["draft"]]
            visible.sort(key=lambda r: (_order_key(r["created_at"]), r["id"]), reverse=True)
            page, links = self._paginate(visible, query, link_path)
            return 200, [repo._render_release(r) for r in page], links
        if rest == "/releases/latest":
            full = [r for r in repo.releases if not r["draft"] and not r["prerelease"]]
            if not full:
                return _error(404, "Not Found", doc)
            latest = max(full, key=lambda r: (_order_key(r["created_at"]), r["id"]))
            return 200, repo._render_release(latest), {}
        if rest.startswith("/releases/tags/"):
            tag = rest.removeprefix("/releases/tags/")
            found = [r for r in repo.releases if r["tag_name"] == tag and not r["draft"]]
            if not found:
                return _error(404, "Not Found", doc)
            return 200, repo._render_release(found[0]), {}
        if rest == "/pulls":
            pulls = self._list_pulls(repo, query)
            page, links = self._paginate(pulls, query, link_path)
            return 200, [repo._render_pull(p) for p in page], links
        match = re.fullmatch(r"/pulls/(\d+)", rest)
        if match:
            record = repo.pulls.get(int(match.group(1)))
            if record is None:
                return _error(404, "Not Found", doc)
            return 200, repo._render_pull(record, detailed=True), {}
        if rest.startswith("/compare/"):
            return self._compare(repo, rest.removeprefix("/compare/"), query, link_path, doc)
        if rest == "/commits":
            return self._list_commits(repo, query, link_path, doc)
        if rest.startswith("/commits/"):
            ref = rest.removeprefix("/commits/")
            sha = repo._lookup(ref)
            if sha is None:
                return _error(422, f"No commit found for SHA: {ref}", doc)
            return 200, repo._render_commit(sha, detailed=True), {}
        if rest == "/tags":
            names = sorted(repo.tags, key=_natural_key, reverse=True)
            page, links = self._paginate(names, query, link_path)
            return 200, [repo._render_tag(name) for name in page], links
        return _error(404, "Not Found")

    @staticmethod
    def _doc_for(rest: str) -> str:
        if rest == "":
            return _ROUTE_DOCS["repo"]
        for pattern, key in (
            (r"/releases", "releases"),
            (r"/releases/latest", "latest"),
            (r"/releases/tags/.+", "release_by_tag"),
            (r"/pulls", "pulls"),
            (r"/pulls/\d+", "pull"),
            (r"/compare/.+", "compare"),
            (r"/commits", "commits"),
            (r"/commits/.+", "commit"),
            (r"/tags", "tags"),
        ):
            if re.fullmatch(pattern, rest):
                return _ROUTE_DOCS[key]
        return DOCS

    def _paginate(
        self, items: list[Any], query: dict[str, str], link_path: str
    ) -> tuple[list[Any], dict[str, str]]:
        per_page = min(max(_int_param(query.get("per_page"), DEFAULT_PER_PAGE), 1), MAX_PER_PAGE)
        page = max(_int_param(query.get("page"), 1), 1)
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def url(number: int) -> str:
            params = dict(query)
            params["page"] = str(number)
            return f"<{self.base_url}{quote(link_path)}?{urlencode(params)}>"

        links: list[str] = []
        if page > 1:
            links.append(f'{url(page - 1)}; rel="prev"')
        if page < last:
            links.append(f'{url(page + 1)}; rel="next"')
            links.append(f'{url(last)}; rel="last"')
        if page > 1:
            links.append(f'{url(1)}; rel="first"')
        return chunk, ({"link": ", ".join(links)} if links else {})

    def _list_pulls(self, repo: FakeRepo, query: dict[str, str]) -> list[dict[str, Any]]:
        state = query.get("state") or "open"
        pulls = [p for p in repo.pulls.values() if state == "all" or p["state"] == state]
        if base := query.get("base"):
            pulls = [p for p in pulls if p["base"] == base]
        if head := query.get("head"):
            pulls = [p for p in pulls if head in (f"{repo.owner}:{p['head_ref']}", p["head_ref"])]
        sort = query.get("sort") or "created"
        direction = query.get("direction") or ("desc" if sort == "created" else "asc")
        if sort == "long-running":
            month_ago = self._now - timedelta(days=30)
            pulls = [
                p
                for p in pulls
                if _order_key(p["created_at"])
                <= month_ago.timestamp()
                <= _order_key(p["updated_at"])
            ]
        field_for = {"updated": "updated_at", "popularity": "comments"}
        key_field = field_for.get(sort, "created_at")

        def key(p: dict[str, Any]) -> tuple[float, int]:
            value = p[key_field]
            return (float(value) if key_field == "comments" else _order_key(value), p["number"])

        return sorted(pulls, key=key, reverse=direction == "desc")

    def _list_commits(
        self, repo: FakeRepo, query: dict[str, str], link_path: str, doc: str
    ) -> Routed:
        if not repo.commits:
            return _error(409, "Git Repository is empty.", doc)
        ref = query.get("sha") or repo.default_branch
        start = repo._lookup(ref)
        if start is None:
            return _error(404, "Not Found", doc)
        ordered = list(reversed(repo._chronological(repo._ancestors([start]))))
        since, until = parse_time(query.get("since")), parse_time(query.get("until"))
        if since is not None:
            ordered = [s for s in ordered if repo.commits[s].when >= since]
        if until is not None:
            ordered = [s for s in ordered if repo.commits[s].when <= until]
        if author := query.get("author"):
            ordered = [s for s in ordered if repo.commits[s].author == author]
        page, links = self._paginate(ordered, query, link_path)
        return 200, [repo._render_commit(s) for s in page], links

    def _compare(
        self, repo: FakeRepo, spec: str, query: dict[str, str], link_path: str, doc: str
    ) -> Routed:
        if "..." not in spec:
            return _error(404, "Not Found", doc)
        base_ref, head_ref = (part.removeprefix(f"{repo.owner}:") for part in spec.split("...", 1))
        base, head = repo._lookup(base_ref), repo._lookup(head_ref)
        if base is None or head is None:
            return _error(404, "Not Found", doc)
        merge_base = repo._merge_base(base, head)
        if merge_base is None:
            return _error(404, f"No common ancestor between {base_ref} and {head_ref}.", doc)
        from_base, from_head = repo._ancestors([base]), repo._ancestors([head])
        ahead = repo._chronological(from_head - from_base)
        behind_by = len(from_base - from_head)
        if base == head:
            status = "identical"
        elif behind_by == 0:
            status = "ahead"
        elif not ahead:
            status = "behind"
        else:
            status = "diverged"

        links: dict[str, str] = {}
        if "per_page" in query or "page" in query:
            shown, links = self._paginate(ahead, query, link_path)
        else:
            # Documented: unpaged, at most 250, and the last one is the newest of the comparison.
            shown = ahead[-COMPARE_UNPAGED_LIMIT:]
        web = f"{self.web_url}/{repo.full_name}"
        html = f"{web}/compare/{base_ref}...{head_ref}"
        payload = {
            "url": f"{self.base_url}/repos/{repo.full_name}/compare/{base_ref}...{head_ref}",
            "html_url": html,
            "permalink_url": f"{web}/compare/{repo.owner}:{base[:7]}...{repo.owner}:{head[:7]}",
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "base_commit": repo._render_commit(base),
            "merge_base_commit": repo._render_commit(merge_base),
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": behind_by,
            "total_commits": len(ahead),
            "commits": [repo._render_commit(s) for s in shown],
            "files": [],
        }
        return 200, payload, links
