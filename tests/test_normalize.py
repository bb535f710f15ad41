from datetime import UTC, datetime

from connectors.github import PullRecord, ReleaseRecord
from service.normalize import (
    change_row,
    clean_text,
    referenced_pull_numbers,
    release_note_pull_numbers,
    release_row,
)

WHEN = datetime(2026, 8, 1, tzinfo=UTC)


def release(**fields: object) -> ReleaseRecord:
    values: dict[str, object] = {
        "github_id": 1,
        "tag": "v1.0.0",
        "name": "v1.0.0",
        "body": "",
        "draft": False,
        "prerelease": False,
        "created_at": WHEN,
        "published_at": WHEN,
        "html_url": "https://github.com/o/r/releases/tag/v1.0.0",
        "target_commitish": "main",
    }
    values.update(fields)
    return ReleaseRecord(**values)  # type: ignore[arg-type]


def test_cherry_pick_subjects_reference_both_pull_requests() -> None:
    assert referenced_pull_numbers("fix(test): repair flaky moe test (#4395) (#4408)") == {
        4395,
        4408,
    }
    assert referenced_pull_numbers("Merge pull request #77 from a/b") == {77}
    assert referenced_pull_numbers("see issue #12 for context") == set()


def test_release_notes_links_only_count_for_the_same_repository() -> None:
    body = (
        "* [Kernel] faster MLA by @a in https://github.com/vllm-project/vllm/pull/28001\n"
        "* upstream https://github.com/flashinfer-ai/flashinfer/pull/1999\n"
        "* https://GitHub.com/vllm-project/vllm/pull/28002."
    )
    assert release_note_pull_numbers(body, "https://github.com", "vllm-project/vllm") == {
        28001,
        28002,
    }


def test_drafts_and_unpublished_releases_are_not_stored() -> None:
    assert release_row(release(draft=True)) is None
    assert release_row(release(published_at=None)) is None


def test_hostile_release_text_is_cleaned_before_storage() -> None:
    row = release_row(release(body="ok\x00\x07 fine\n" + "x" * 300_000, name="\x00"))
    assert row is not None
    assert row["body"].startswith("ok fine\n")
    assert "\x00" not in row["body"] and len(row["body"]) == 200_000
    assert row["name"] is None
    assert clean_text("tab\tand\nnewline kept", 100) == "tab\tand\nnewline kept"


def test_closed_unmerged_pull_is_not_a_change() -> None:
    pull = PullRecord(
        github_id=1,
        number=5,
        title="t",
        body="",
        author="a",
        labels=("b", "a", "a"),
        merged_at=None,
        merge_commit_sha=None,
        base_branch="main",
        html_url="u",
        updated_at=WHEN,
    )
    assert change_row(pull) is None
    merged = change_row(PullRecord(**{**pull.__dict__, "merged_at": WHEN}))
    assert merged is not None and merged["labels"] == ["a", "b"]
