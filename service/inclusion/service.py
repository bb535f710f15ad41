"""Release inclusion (R3): which release first shipped each change.

Each release is compared with the release published just before it, once in the chain of
all releases and once in the chain of stable releases. A change belongs to a release when
its merge commit is in one of the release's ranges (commit ancestry), when a commit of such
a range names the pull request (cherry-picks: ``... (#4395) (#4408)``), or when the release
notes link it. The first release of a change is the earliest-published release that
contains it; since a change first shipped by release R is in no earlier release, it is in
R's range, so the minimum over the ranges is exact.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.orm import Session

from connectors import github
from service.changes.models import Change
from service.inclusion.models import Comparison, ComparisonCommit, LinkMethod, ReleaseChange
from service.normalize import referenced_pull_numbers, release_note_pull_numbers
from service.releases.models import Release

ROOT = ""


@dataclass(frozen=True)
class Range:
    base_tag: str  # ROOT for the history before the first release
    head_tag: str


def release_order(release: Release) -> tuple[datetime, int]:
    return (release.published_at, release.id)


def needed_ranges(releases: Iterable[Release], since: datetime | None) -> list[Range]:
    """The ranges of both chains for releases published since ``since`` (all if None)."""
    ordered = sorted(releases, key=release_order)
    ranges: dict[Range, None] = {}
    for chain in (ordered, [r for r in ordered if not r.prerelease]):
        previous: Release | None = None
        for release in chain:
            if since is None or release.published_at >= since:
                base = previous.tag if previous is not None else ROOT
                ranges[Range(base, release.tag)] = None
            previous = release
    return list(ranges)


def cached_ranges(session: Session, project_id: int) -> set[Range]:
    rows = session.execute(
        select(Comparison.base_tag, Comparison.head_tag).where(Comparison.project_id == project_id)
    )
    return {Range(base, head) for base, head in rows}


def store_comparison(
    session: Session, project_id: int, compared: Range, fetched: github.Range
) -> None:
    """Cache a compare and record the commit its head tag points at."""
    comparison = Comparison(
        project_id=project_id,
        base_tag=compared.base_tag,
        head_tag=compared.head_tag,
        total_commits=len(fetched.commits),
    )
    session.add(comparison)
    session.flush()
    session.add_all(
        ComparisonCommit(
            comparison_id=comparison.id, position=position, sha=c.sha, subject=c.subject[:1000]
        )
        for position, c in enumerate(fetched.commits)
    )
    if fetched.head_sha:
        session.execute(
            update(Release)
            .where(Release.project_id == project_id, Release.tag == compared.head_tag)
            .values(tag_commit_sha=fetched.head_sha)
        )


def relink(session: Session, project_id: int, repo: str, web_url: str) -> int:
    """Recompute the release↔change links and first releases of one project.

    Returns the number of changes whose first release or first stable release changed."""
    releases = {
        r.tag: r for r in session.scalars(select(Release).where(Release.project_id == project_id))
    }
    changes = list(
        session.execute(
            select(Change.id, Change.number, Change.merge_commit_sha, Change.merged_at).where(
                Change.project_id == project_id
            )
        )
    )
    by_sha = {sha: change_id for change_id, _, sha, _ in changes if sha}
    by_number = {number: (change_id, merged_at) for change_id, number, _, merged_at in changes}

    wanted: set[tuple[int, int, str]] = set()

    def link_reference(release: Release, number: int, method: LinkMethod) -> None:
        found = by_number.get(number)
        # A reference can only ship a change that was merged by the time of the release.
        if found is not None and found[1] <= release.published_at:
            wanted.add((release.id, found[0], method.value))

    commits = session.execute(
        select(Comparison.head_tag, ComparisonCommit.sha, ComparisonCommit.subject)
        .join(ComparisonCommit, ComparisonCommit.comparison_id == Comparison.id)
        .where(Comparison.project_id == project_id)
    )
    for head_tag, sha, subject in commits:
        release = releases.get(head_tag)
        if release is None:
            continue
        change_id = by_sha.get(sha)
        if change_id is not None:
            wanted.add((release.id, change_id, LinkMethod.ANCESTRY.value))
        for number in referenced_pull_numbers(subject):
            link_reference(release, number, LinkMethod.COMMIT_REFERENCE)
    for release in releases.values():
        for number in release_note_pull_numbers(release.body, web_url, repo):
            link_reference(release, number, LinkMethod.RELEASE_NOTES)

    release_ids = [r.id for r in releases.values()]
    existing = (
        set(
            session.execute(
                select(
                    ReleaseChange.release_id, ReleaseChange.change_id, ReleaseChange.method
                ).where(ReleaseChange.release_id.in_(release_ids))
            )
        )
        if release_ids
        else set()
    )
    stale = existing - wanted
    if stale:
        session.execute(
            delete(ReleaseChange).where(
                tuple_(ReleaseChange.release_id, ReleaseChange.change_id, ReleaseChange.method).in_(
                    list(stale)
                )
            )
        )
    missing = wanted - existing
    if missing:
        session.execute(
            ReleaseChange.__table__.insert(),
            [{"release_id": r, "change_id": c, "method": m} for r, c, m in sorted(missing)],
        )
    return _update_first_releases(session, project_id, releases.values(), wanted)


def _update_first_releases(
    session: Session,
    project_id: int,
    releases: Iterable[Release],
    links: set[tuple[int, int, str]],
) -> int:
    by_id = {r.id: r for r in releases}
    first: dict[int, Release] = {}
    first_stable: dict[int, Release] = {}
    for release_id, change_id, _ in links:
        release = by_id[release_id]
        current = first.get(change_id)
        if current is None or release_order(release) < release_order(current):
            first[change_id] = release
        if not release.prerelease:
            current = first_stable.get(change_id)
            if current is None or release_order(release) < release_order(current):
                first_stable[change_id] = release
    stored = session.execute(
        select(Change.id, Change.first_release_id, Change.first_stable_release_id).where(
            Change.project_id == project_id
        )
    )
    updates = []
    for change_id, first_id, stable_id in stored:
        new_first = first[change_id].id if change_id in first else None
        new_stable = first_stable[change_id].id if change_id in first_stable else None
        if (new_first, new_stable) != (first_id, stable_id):
            updates.append(
                {
                    "id": change_id,
                    "first_release_id": new_first,
                    "first_stable_release_id": new_stable,
                }
            )
    if updates:
        session.execute(update(Change), updates)
    return len(updates)
