import pytest

from service.versions import is_prerelease, parse_tag


@pytest.mark.parametrize(
    ("tag", "version", "line", "prerelease"),
    [
        ("v0.31.0", "0.31.0", "0.31.0", False),
        ("v0.7.1rc4", "0.7.1rc4", "0.7.1", True),
        ("v1.4.0rc0", "1.4.0rc0", "1.4.0", True),
        ("fa4-v4.0.0.beta25", "4.0.0b25", "fa4-4.0.0", True),
        ("v2.8.3", "2.8.3", "2.8.3", False),
        ("v0.2.0.post1", "0.2.0.post1", "0.2.0", False),
        ("0.1.7.post2", "0.1.7.post2", "0.1.7", False),
        ("v5.0.0-rc.1", "5.0.0rc1", "5.0.0", True),
        ("v1.0.0-alpha", "1.0.0a0", "1.0.0", True),
        ("v4.57.0.dev0", "4.57.0.dev0", "4.57.0", True),
        ("v0.11.0rc1", "0.11.0rc1", "0.11.0", True),
    ],
)
def test_tags_parse_to_version_line_and_status(
    tag: str, version: str, line: str, prerelease: bool
) -> None:
    parsed = parse_tag(tag)
    assert (parsed.version, parsed.line, parsed.prerelease) == (version, line, prerelease)


def test_nightly_tag_is_prerelease_even_though_pep440_reads_a_post_release() -> None:
    parsed = parse_tag("nightly-v0.6.18-20260819")
    assert parsed.nightly and parsed.prerelease
    assert parsed.line == "0.6.18"


def test_fa2_and_fa4_tags_are_different_version_lines() -> None:
    assert parse_tag("fa4-v4.0.0.beta25").line != parse_tag("v4.0.0").line


def test_tag_without_dotted_version_falls_back_to_the_tag_itself() -> None:
    parsed = parse_tag("b1234")
    assert (parsed.version, parsed.line, parsed.prerelease, parsed.pep440) == (
        "b1234",
        "b1234",
        False,
        False,
    )


def test_non_pep440_suffix_still_detects_prerelease_words() -> None:
    parsed = parse_tag("v2.0.0-preview.3+cuda12")
    assert not parsed.pep440 or parsed.prerelease
    assert parsed.prerelease


def test_github_flag_or_version_string_makes_a_prerelease() -> None:
    assert is_prerelease("v1.0.0", github_prerelease=True)
    assert is_prerelease("v1.0.0rc1", github_prerelease=False)
    assert not is_prerelease("v1.0.0.post2", github_prerelease=False)
