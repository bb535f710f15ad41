from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest

from tests.fake_github import FakeGitHub, FakeRepo

TOKEN = "ghp_fake_token"
T0 = datetime(2026, 8, 10, 12, 0, tzinfo=UTC)
REPO = "acme/widget"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        fake.set_time(T0)
        yield fake


@pytest.fixture
def api(gh: FakeGitHub) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=gh.base_url, headers=headers, timeout=5) as client:
        yield client


@pytest.fixture
def anon(gh: FakeGitHub) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gh.base_url, timeout=5) as client:
        yield client


def _rels(response: httpx.Response) -> dict[str, str]:
    return {rel: link["url"] for rel, link in response.links.items()}


def _with_releases(gh: FakeGitHub, count: int) -> FakeRepo:
    repo = gh.repo(REPO)
    for i in range(count):
        repo.commit(f"change {i}", committed_at=T0 - timedelta(hours=count - i))
        repo.release(f"v0.{i}")
    return repo


def test_pagination_follows_link_headers(gh: FakeGitHub, api: httpx.Client) -> None:
    repo = _with_releases(gh, 65)

    first = api.get(f"/repos/{REPO}/releases")
    assert first.status_code == 200
    assert len(first.json()) == 30
    assert set(_rels(first)) == {"next", "last"}
    assert _rels(first)["last"].startswith(f"{gh.base_url}/repositories/{repo.id}/releases")
    assert _rels(first)["last"].endswith("page=3")

    middle = api.get(_rels(first)["next"])
    assert middle.status_code == 200
    assert [part.split("; ")[1] for part in middle.headers["link"].split(", ")] == [
        'rel="prev"',
        'rel="next"',
        'rel="last"',
        'rel="first"',
    ]

    tags: list[str] = []
    response = first
    while True:
        tags += [release["tag_name"] for release in response.json()]
        if "next" not in _rels(response):
            break
        response = api.get(_rels(response)["next"])
    assert set(_rels(response)) == {"prev", "first"}
    assert tags == [f"v0.{i}" for i in reversed(range(65))]

    sized = api.get(f"/repos/{REPO}/releases", params={"per_page": 50})
    assert len(sized.json()) == 50
    assert _rels(sized)["next"].endswith("?per_page=50&page=2")

    capped = api.get(f"/repos/{REPO}/releases", params={"per_page": 1000})
    assert len(capped.json()) == 65
    assert "link" not in capped.headers


def test_etag_304_is_free_only_when_authenticated(
    gh: FakeGitHub, api: httpx.Client, anon: httpx.Client
) -> None:
    repo = _with_releases(gh, 2)
    path = f"/repos/{REPO}/releases"

    fresh = api.get(path)
    etag = fresh.headers["etag"]
    assert etag.startswith('W/"') and etag.endswith('"')
    remaining = int(fresh.headers["x-ratelimit-remaining"])

    cached = api.get(path, headers={"If-None-Match": etag})
    assert cached.status_code == 304
    assert cached.content == b""
    assert cached.headers["etag"] == etag
    assert int(cached.headers["x-ratelimit-remaining"]) == remaining
    assert gh.requests[-1].cost == 0

    anon_fresh = anon.get(path)
    anon_remaining = int(anon_fresh.headers["x-ratelimit-remaining"])
    assert anon_fresh.headers["x-ratelimit-limit"] == "60"
    anon_cached = anon.get(path, headers={"If-None-Match": anon_fresh.headers["etag"]})
    assert anon_cached.status_code == 304
    assert int(anon_cached.headers["x-ratelimit-remaining"]) == anon_remaining - 1
    assert gh.requests[-1].cost == 1

    repo.release("v1.0")
    changed = api.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["etag"] != etag
    assert changed.json()[0]["tag_name"] == "v1.0"


def test_rate_limit_exhaustion_then_refill() -> None:
    with FakeGitHub(token=TOKEN, rate_limit=3) as gh:
        gh.set_time(T0)
        gh.repo(REPO).commit("init")
        headers = {"Authorization": f"token {TOKEN}"}
        with httpx.Client(base_url=gh.base_url, headers=headers, timeout=5) as api:
            remaining = [api.get(f"/repos/{REPO}").headers["x-ratelimit-remaining"] for _ in "abc"]
            assert remaining == ["2", "1", "0"]

            limited = api.get(f"/repos/{REPO}")
            assert limited.status_code == 403
            assert limited.json()["message"].startswith("API rate limit exceeded")
            assert limited.headers["x-ratelimit-remaining"] == "0"
            assert limited.headers["x-ratelimit-used"] == "3"
            assert limited.headers["x-ratelimit-reset"] == str(int(T0.timestamp()) + 3600)
            assert gh.requests[-1].cost == 0

            status = api.get("/rate_limit").json()
            assert status["resources"]["core"] == {
                "limit": 3,
                "used": 3,
                "remaining": 0,
                "reset": int(T0.timestamp()) + 3600,
            }
            assert status["rate"] == status["resources"]["core"]

            unauthenticated = httpx.get(f"{gh.base_url}/repos/{REPO}", timeout=5)
            assert unauthenticated.status_code == 200
            assert unauthenticated.headers["x-ratelimit-limit"] == "60"

            gh.advance(3599)
            assert api.get(f"/repos/{REPO}").status_code == 403
            gh.advance(1)
            refilled = api.get(f"/repos/{REPO}")
            assert refilled.status_code == 200
            assert refilled.headers["x-ratelimit-remaining"] == "2"
            assert refilled.headers["x-ratelimit-reset"] == str(int(T0.timestamp()) + 7200)


def test_compare_release_branch_with_cherry_picks(gh: FakeGitHub, api: httpx.Client) -> None:
    repo = gh.repo(REPO)
    day = timedelta(days=1)
    repo.commit("initial", committed_at=T0 - 10 * day)
    b = repo.commit("feature b", committed_at=T0 - 9 * day)
    repo.tag("v1.0", "main")
    c = repo.commit("feature c", committed_at=T0 - 8 * day)
    d = repo.commit("fix d", committed_at=T0 - 7 * day)
    e = repo.commit("feature e", committed_at=T0 - 6 * day)
    repo.create_branch("release/1.x", "v1.0")
    picked = repo.cherry_pick(d, branch="release/1.x", committed_at=T0 - 5 * day)
    repo.tag("v1.0.1", "release/1.x")
    assert picked != d

    patch = api.get(f"/repos/{REPO}/compare/v1.0...v1.0.1").json()
    assert (patch["status"], patch["ahead_by"], patch["behind_by"]) == ("ahead", 1, 0)
    assert patch["total_commits"] == 1
    assert [x["sha"] for x in patch["commits"]] == [picked]
    assert patch["commits"][0]["commit"]["message"] == "fix d"
    assert patch["merge_base_commit"]["sha"] == b
    assert patch["base_commit"]["sha"] == b
    assert patch["files"] == []
    assert patch["html_url"] == f"https://github.com/{REPO}/compare/v1.0...v1.0.1"
    assert patch["diff_url"].endswith(".diff") and patch["patch_url"].endswith(".patch")
    assert patch["permalink_url"] == (
        f"https://github.com/{REPO}/compare/acme:{b[:7]}...acme:{picked[:7]}"
    )

    diverged = api.get(f"/repos/{REPO}/compare/v1.0.1...main").json()
    assert (diverged["status"], diverged["ahead_by"], diverged["behind_by"]) == ("diverged", 3, 1)
    assert diverged["merge_base_commit"]["sha"] == b
    assert [x["sha"] for x in diverged["commits"]] == [c, d, e]

    by_branch = api.get(f"/repos/{REPO}/compare/release/1.x...main").json()
    assert by_branch["merge_base_commit"]["sha"] == b

    behind = api.get(f"/repos/{REPO}/compare/main...v1.0").json()
    assert (behind["status"], behind["behind_by"], behind["commits"]) == ("behind", 3, [])
    same = api.get(f"/repos/{REPO}/compare/v1.0...{b}").json()
    assert same["status"] == "identical" and same["total_commits"] == 0

    missing = api.get(f"/repos/{REPO}/compare/v1.0...v9.9")
    assert missing.status_code == 404
    assert missing.json()["message"] == "Not Found"


def test_compare_over_250_commits_truncates_unless_paged(gh: FakeGitHub, api: httpx.Client) -> None:
    repo = gh.repo(REPO)
    repo.commit("base", committed_at=T0 - timedelta(days=30))
    repo.tag("v1.0", "main")
    shas = [repo.commit(f"c{i}", committed_at=T0 - timedelta(minutes=300 - i)) for i in range(300)]

    unpaged = api.get(f"/repos/{REPO}/compare/v1.0...main")
    body = unpaged.json()
    assert body["total_commits"] == 300 and body["ahead_by"] == 300
    assert len(body["commits"]) == 250
    assert body["commits"][-1]["sha"] == shas[-1]
    assert [x["sha"] for x in body["commits"]] == shas[50:]
    assert "link" not in unpaged.headers

    collected: list[str] = []
    response = api.get(f"/repos/{REPO}/compare/v1.0...main", params={"per_page": 100})
    assert response.json()["files"] == []
    while True:
        page = response.json()
        assert page["total_commits"] == 300
        collected += [x["sha"] for x in page["commits"]]
        if "next" not in _rels(response):
            break
        response = api.get(_rels(response)["next"])
    assert collected == shas
    assert sum(1 for r in gh.requests if "/compare/" in r.path) == 4


def test_pulls_sorting_and_defaults(gh: FakeGitHub, api: httpx.Client) -> None:
    repo = gh.repo(REPO)
    hour = timedelta(hours=1)
    repo.pull(1, title="old open", state="open", created_at=T0 - 5 * hour, updated_at=T0 - 1 * hour)
    repo.pull(2, title="new open", state="open", created_at=T0 - 2 * hour, updated_at=T0 - 2 * hour)
    repo.pull(
        3,
        title="merged",
        created_at=T0 - 4 * hour,
        merged_at=T0 - 3 * hour,
        merge_commit_sha="a" * 40,
        labels=["bug"],
    )
    sha = repo.merge_pull(4, "Squashed", merged_at=T0 - timedelta(minutes=30))

    default = api.get(f"/repos/{REPO}/pulls").json()
    assert [p["number"] for p in default] == [2, 1]

    updated_desc = api.get(
        f"/repos/{REPO}/pulls", params={"state": "all", "sort": "updated", "direction": "desc"}
    ).json()
    assert [p["number"] for p in updated_desc] == [4, 1, 2, 3]

    updated_default = api.get(f"/repos/{REPO}/pulls", params={"state": "all", "sort": "updated"})
    assert [p["number"] for p in updated_default.json()] == [3, 2, 1, 4]

    closed = api.get(f"/repos/{REPO}/pulls", params={"state": "closed"}).json()
    assert {p["number"] for p in closed} == {3, 4}
    assert all(p["state"] == "closed" and p["merged_at"] for p in closed)
    squash = next(p for p in closed if p["number"] == 4)
    assert squash["merge_commit_sha"] == sha
    assert repo.commits[sha].message == "Squashed (#4)"
    assert next(p for p in closed if p["number"] == 3)["labels"][0]["name"] == "bug"

    gh.advance(60)
    repo.update_pull(2, title="retitled")
    bumped = api.get(f"/repos/{REPO}/pulls", params={"sort": "updated", "direction": "desc"}).json()
    assert bumped[0]["number"] == 2
    assert bumped[0]["updated_at"] == "2026-08-10T12:01:00Z"


def _statuses(seed: int) -> list[int]:
    with FakeGitHub(fault_seed=seed) as gh:
        gh.repo(REPO)
        gh.fail_rate = 0.3
        with httpx.Client(base_url=gh.base_url, timeout=5) as client:
            statuses = [client.get(f"/repos/{REPO}").status_code for _ in range(40)]
        assert all(r.cost == (1 if r.status == 200 else 0) for r in gh.requests)
        return statuses


def test_fail_rate_is_deterministic_for_a_seed() -> None:
    first, again, other = _statuses(7), _statuses(7), _statuses(8)
    assert first == again
    assert first != other
    assert set(first) == {200, 502, 503}


def test_secondary_limit_every_n(gh: FakeGitHub, api: httpx.Client) -> None:
    gh.repo(REPO)
    gh.secondary_limit_every = 3
    responses = [api.get(f"/repos/{REPO}") for _ in range(7)]
    assert [r.status_code for r in responses] == [200, 200, 403, 200, 200, 403, 200]
    limited = responses[2]
    assert limited.headers["retry-after"] == "60"
    assert limited.json()["message"].startswith("You have exceeded a secondary rate limit")
    assert responses[-1].headers["x-ratelimit-used"] == "5"


def test_fail_next(gh: FakeGitHub, api: httpx.Client) -> None:
    gh.repo(REPO)
    gh.fail_next(502, count=2)
    gh.fail_next(429, headers={"Retry-After": "5"}, body='{"message": "slow down"}')
    statuses = [api.get(f"/repos/{REPO}") for _ in range(4)]
    assert [r.status_code for r in statuses] == [502, 502, 429, 200]
    assert statuses[2].headers["retry-after"] == "5"
    assert statuses[2].json() == {"message": "slow down"}


def test_unknown_repo_is_404(gh: FakeGitHub, api: httpx.Client) -> None:
    response = api.get("/repos/acme/nope")
    assert response.status_code == 404
    assert response.json() == {
        "message": "Not Found",
        "documentation_url": "https://docs.github.com/rest/repos/repos#get-a-repository",
        "status": "404",
    }
    gh.repo(REPO).commit("init")
    assert api.get("/repos/ACME/Widget").json()["full_name"] == REPO
    gh.remove_repo(REPO)
    assert api.get(f"/repos/{REPO}/releases").status_code == 404


def test_timestamps_render_like_github_and_strings_verbatim(
    gh: FakeGitHub, api: httpx.Client
) -> None:
    repo = gh.repo(REPO)
    plus_two = timezone(timedelta(hours=2))
    repo.commit("init", committed_at=datetime(2026, 8, 10, 23, 30, 0, 123456, tzinfo=plus_two))
    repo.release("v1.0", published_at="2026-08-10T23:30:00-07:00")
    repo.pull(1, title="odd", merged_at="not-a-date", closed_at="2026-08-10T23:30:00-07:00")

    release = api.get(f"/repos/{REPO}/releases").json()[0]
    assert release["published_at"] == "2026-08-10T23:30:00-07:00"
    assert release["created_at"] == "2026-08-10T21:30:00Z"
    pull = api.get(f"/repos/{REPO}/pulls", params={"state": "closed"}).json()[0]
    assert pull["merged_at"] == "not-a-date"
    assert pull["closed_at"] == "2026-08-10T23:30:00-07:00"
    assert pull["created_at"] == "2026-08-10T12:00:00Z"
    commit = api.get(f"/repos/{REPO}/commits").json()[0]
    assert commit["commit"]["committer"]["date"] == "2026-08-10T21:30:00Z"


def test_auth_and_draft_visibility(gh: FakeGitHub, api: httpx.Client, anon: httpx.Client) -> None:
    repo = gh.repo(REPO)
    repo.commit("init")
    repo.release("v1.0")
    draft = repo.release("v2.0", draft=True)
    assert draft["published_at"] is None

    assert [r["tag_name"] for r in api.get(f"/repos/{REPO}/releases").json()] == ["v2.0", "v1.0"]
    assert [r["tag_name"] for r in anon.get(f"/repos/{REPO}/releases").json()] == ["v1.0"]

    wrong = anon.get(f"/repos/{REPO}", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert wrong.json()["message"] == "Bad credentials"


def test_api_version_and_common_headers(gh: FakeGitHub, api: httpx.Client) -> None:
    gh.repo(REPO).commit("init")
    ok = api.get(f"/repos/{REPO}", headers={"X-GitHub-Api-Version": "2022-11-28"})
    assert ok.headers["x-github-api-version-selected"] == "2022-11-28"
    assert ok.headers["content-type"] == "application/json; charset=utf-8"
    assert ok.headers["x-ratelimit-resource"] == "core"
    assert ok.headers["x-github-request-id"]
    assert "x-github-api-version-selected" not in api.get(f"/repos/{REPO}").headers

    bad = api.get(f"/repos/{REPO}", headers={"X-GitHub-Api-Version": "v3"})
    assert bad.status_code == 400
    assert "is not a supported version" in bad.json()["message"]

    assert api.get(f"/repos/{REPO}/").status_code == 404
    recorded = gh.requests[-1]
    assert (recorded.method, recorded.path, recorded.status) == ("GET", f"/repos/{REPO}/", 404)
    assert recorded.request_headers["authorization"] == f"Bearer {TOKEN}"


def test_commits_and_tags(gh: FakeGitHub, api: httpx.Client) -> None:
    repo = gh.repo(REPO)
    shas = [repo.commit(f"c{i}", committed_at=T0 - timedelta(days=5 - i)) for i in range(5)]
    repo.tag("v1.2", shas[1])
    repo.tag("v1.10", shas[3])

    listed = api.get(f"/repos/{REPO}/commits").json()
    assert [c["sha"] for c in listed] == shas[::-1]
    assert listed[0]["parents"][0]["sha"] == shas[3]

    window = api.get(
        f"/repos/{REPO}/commits",
        params={
            "since": (T0 - timedelta(days=4)).isoformat(),
            "until": (T0 - timedelta(days=2)).isoformat(),
        },
    ).json()
    assert [c["sha"] for c in window] == [shas[3], shas[2], shas[1]]
    assert [c["sha"] for c in api.get(f"/repos/{REPO}/commits", params={"sha": "v1.2"}).json()] == [
        shas[1],
        shas[0],
    ]

    tags = api.get(f"/repos/{REPO}/tags").json()
    assert [t["name"] for t in tags] == ["v1.10", "v1.2"]
    assert tags[0]["commit"]["sha"] == shas[3]
    assert set(tags[0]) == {"name", "commit", "zipball_url", "tarball_url", "node_id"}


def test_stop_is_prompt_and_closes_connections() -> None:
    gh = FakeGitHub()
    base = gh.start()
    assert base.startswith("http://127.0.0.1:")
    with httpx.Client(base_url=base, timeout=2) as client:
        assert client.get("/rate_limit").status_code == 200
        started = time.monotonic()
        gh.stop()
        assert time.monotonic() - started < 1
        with pytest.raises(httpx.TransportError):
            client.get("/rate_limit")
