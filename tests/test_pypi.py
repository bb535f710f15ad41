"""PyPI availability against a local fake of the per-release JSON API."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from connectors.pypi import (
    NotAVersion,
    PyPIClient,
    PyPIError,
    normalize_name,
    normalize_version,
    parse_release,
)
from tests.fake_feeds import FakeFeeds, PyPIFile, pypi_release

UPLOADED = datetime(2026, 10, 2, 18, 4, 5, 123456, tzinfo=UTC)


def wheel(
    name: str, when: datetime, *, yanked: bool = False, yanked_reason: str | None = None
) -> PyPIFile:
    return PyPIFile(name, "bdist_wheel", when, yanked=yanked, yanked_reason=yanked_reason)


def sdist(name: str, when: datetime) -> PyPIFile:
    return PyPIFile(name, "sdist", when)


class RecordingSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def fake() -> Iterator[FakeFeeds]:
    with FakeFeeds() as server:
        yield server


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
def client(fake: FakeFeeds, sleep: RecordingSleep) -> Iterator[PyPIClient]:
    with PyPIClient(
        fake.base_url, timeout=5.0, max_attempts=3, sleep=sleep, rng=random.Random(1)
    ) as pypi:
        yield pypi


def test_earliest_non_yanked_wheel_upload_is_reported(fake: FakeFeeds, client: PyPIClient) -> None:
    fake.pypi(
        "vllm",
        "0.31.0",
        [
            sdist("vllm-0.31.0.tar.gz", UPLOADED - timedelta(hours=3)),
            wheel("vllm-0.31.0-cp38-abi3-manylinux_2_31_x86_64.whl", UPLOADED + timedelta(hours=1)),
            wheel("vllm-0.31.0-cp38-abi3-manylinux_2_31_aarch64.whl", UPLOADED),
            wheel(
                "vllm-0.31.0-cp38-abi3-manylinux_2_28_x86_64.whl",
                UPLOADED - timedelta(hours=2),
                yanked=True,
                yanked_reason="wrong CUDA",
            ),
        ],
    )
    result = client.availability("vllm", "v0.31.0")
    assert [r.path for r in fake.requests] == ["/pypi/vllm/0.31.0/json"]
    assert result.on_pypi and result.has_wheel and not result.sdist_only and not result.yanked
    assert result.status == "wheel" and result.wheel_count == 2
    assert result.first_wheel_upload == UPLOADED
    assert result.first_wheel_upload.tzinfo is UTC
    assert result.version == "0.31.0" and result.name == "vllm"
    assert result.url == f"{fake.base_url}/project/vllm/0.31.0/"


def test_only_an_sdist_is_not_installable_as_a_wheel(fake: FakeFeeds, client: PyPIClient) -> None:
    fake.pypi(
        "flash-attn",
        "2.8.3",
        [
            sdist("flash_attn-2.8.3.tar.gz", UPLOADED),
            wheel("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", UPLOADED, yanked=True),
        ],
    )
    result = client.availability("Flash_Attn", "v2.8.3")
    assert fake.requests[0].path == "/pypi/flash-attn/2.8.3/json"
    assert not result.has_wheel and result.sdist_only and result.status == "sdist_only"
    assert result.first_wheel_upload is None


def test_a_yanked_release_has_no_wheel(fake: FakeFeeds, client: PyPIClient) -> None:
    fake.pypi("trl", "0.9.0", [wheel("trl-0.9.0-py3-none-any.whl", UPLOADED)], yanked=True)
    result = client.availability("trl", "0.9.0")
    assert not result.has_wheel and result.yanked and result.status == "yanked"


def test_version_not_on_pypi_is_an_answer_not_an_error(
    fake: FakeFeeds, client: PyPIClient, sleep: RecordingSleep
) -> None:
    result = client.availability("sglang", "v0.5.99")
    assert not result.on_pypi and result.status == "not_on_pypi" and not result.has_wheel
    assert len(fake.requests) == 1 and sleep.waits == []


def test_other_spellings_of_the_name_follow_pypis_redirect(
    fake: FakeFeeds, client: PyPIClient
) -> None:
    fake.pypi("PyYAML", "6.0.2", [wheel("PyYAML-6.0.2-cp312-cp312-manylinux.whl", UPLOADED)])
    result = client.availability("pyyaml", "6.0.2")
    assert result.has_wheel
    assert [r.path for r in fake.requests] == ["/pypi/pyyaml/6.0.2/json", "/pypi/PyYAML/6.0.2/json"]


@pytest.mark.parametrize(
    ("tag", "prefix", "version"),
    [
        ("v0.31.0", "", "0.31.0"),
        ("0.7.1rc1", "", "0.7.1rc1"),
        ("v0.7.1-rc.4", "", "0.7.1rc4"),
        ("fa4-v4.0.0.beta25", "fa4-v", "4.0.0b25"),
        ("core_v0.19.2", "core_v", "0.19.2"),
        ("v0.23.0.post1", "", "0.23.0.post1"),
        ("V2.0", "", "2.0"),
    ],
)
def test_tags_normalise_to_pep_440(tag: str, prefix: str, version: str) -> None:
    assert normalize_version(tag, prefix) == version


@pytest.mark.parametrize("tag", ["nightly", "main", "nightly-v0.6.18-20260816x", ""])
def test_tags_without_a_version_are_refused(tag: str) -> None:
    with pytest.raises(NotAVersion):
        normalize_version(tag)


def test_names_normalise_per_pep_503() -> None:
    assert normalize_name("Flash_Attn") == "flash-attn"
    assert normalize_name("TensorRT.LLM") == "tensorrt-llm"
    with pytest.raises(PyPIError):
        normalize_name("../etc/passwd")


def test_server_errors_are_retried_with_jittered_backoff(
    fake: FakeFeeds, client: PyPIClient, sleep: RecordingSleep
) -> None:
    path = "/pypi/vllm/0.31.0/json"
    fake.pypi("vllm", "0.31.0", [wheel("vllm-0.31.0-py3-none-any.whl", UPLOADED)])
    fake.fail_next(path, 503)
    fake.fail_next(path, 502)
    assert client.availability("vllm", "0.31.0").has_wheel
    assert len(fake.requests_to(path)) == 3
    assert len(sleep.waits) == 2
    assert 0.5 <= sleep.waits[0] <= 1.5 and 1.0 <= sleep.waits[1] <= 3.0


def test_retry_after_is_honoured(
    fake: FakeFeeds, client: PyPIClient, sleep: RecordingSleep
) -> None:
    path = "/pypi/vllm/0.31.0/json"
    fake.pypi("vllm", "0.31.0", [wheel("vllm-0.31.0-py3-none-any.whl", UPLOADED)])
    fake.fail_next(path, 429, headers={"retry-after": "7"})
    assert client.availability("vllm", "0.31.0").has_wheel
    assert sleep.waits == [7.0]


def test_persistent_server_errors_give_a_clear_error(fake: FakeFeeds, client: PyPIClient) -> None:
    fake.fail_next("/pypi/vllm/0.31.0/json", 503, count=5)
    with pytest.raises(PyPIError, match=r"after 3 attempts \(HTTP 503\)"):
        client.availability("vllm", "0.31.0")
    assert len(fake.requests) == 3


def test_timeouts_are_retried_then_reported(fake: FakeFeeds, sleep: RecordingSleep) -> None:
    fake.fail_next("/pypi/vllm/0.31.0/json", 200, count=5, delay=5.0)
    with (
        PyPIClient(fake.base_url, timeout=0.2, max_attempts=2, sleep=sleep) as client,
        pytest.raises(PyPIError, match="timeout"),
    ):
        client.availability("vllm", "0.31.0")
    assert client.requests == 2 and len(sleep.waits) == 1


def test_other_client_errors_are_final(fake: FakeFeeds, client: PyPIClient) -> None:
    fake.fail_next("/pypi/vllm/0.31.0/json", 403)
    with pytest.raises(PyPIError, match="403") as raised:
        client.availability("vllm", "0.31.0")
    assert raised.value.status == 403 and len(fake.requests) == 1


def test_a_non_json_answer_is_an_error(fake: FakeFeeds, client: PyPIClient) -> None:
    fake.route("/pypi/vllm/0.31.0/json", b"<html>maintenance</html>", content_type="text/html")
    with pytest.raises(PyPIError, match="not JSON"):
        client.availability("vllm", "0.31.0")


def test_one_request_at_a_time_per_host(fake: FakeFeeds) -> None:
    for minor in range(4):
        route = fake.pypi("vllm", f"0.3{minor}.0", [wheel("vllm-py3-none-any.whl", UPLOADED)])
        route.delay = 0.02  # long enough for overlapping requests to show
    clients = [PyPIClient(fake.base_url) for _ in range(2)]
    threads = [
        threading.Thread(target=clients[m % 2].availability, args=("vllm", f"0.3{m}.0"))
        for m in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for pypi in clients:
        pypi.close()
    assert len(fake.requests) == 4 and fake.max_in_flight == 1


def test_legacy_upload_time_without_offset_is_read_as_utc() -> None:
    data = pypi_release("helion", "1.5.1", [wheel("helion-1.5.1-py3-none-any.whl", UPLOADED)])
    del data["urls"][0]["upload_time_iso_8601"]
    result = parse_release("helion", "1.5.1", data, "https://pypi.org/project/helion/1.5.1/")
    assert result.first_wheel_upload == UPLOADED.replace(microsecond=0)


def test_upload_times_with_offsets_are_converted_to_utc() -> None:
    data = pypi_release("trl", "1.16.0", [wheel("trl-1.16.0-py3-none-any.whl", UPLOADED)])
    data["urls"][0]["upload_time_iso_8601"] = "2026-10-03T02:04:05+08:00"
    result = parse_release("trl", "1.16.0", data, "https://pypi.org/project/trl/1.16.0/")
    assert result.first_wheel_upload == datetime(2026, 10, 2, 18, 4, 5, tzinfo=UTC)


def test_a_release_document_without_files_list_is_an_error() -> None:
    with pytest.raises(PyPIError, match="urls"):
        parse_release("x", "1.0", {"info": {}}, "https://pypi.org/project/x/1.0/")
