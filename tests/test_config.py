from service.config import Settings


def test_without_a_token_start_up_says_what_the_60_requests_per_hour_afford() -> None:
    settings = Settings(github_token=None, _env_file=None)  # type: ignore[call-arg]
    warning = settings.token_warning(30)
    assert warning is not None
    assert "60 unauthenticated API requests per hour" in warning
    assert "at most 60 project(s) fit when idle (30 tracked need about 30 requests/hour)" in warning
    slower = settings.model_copy(update={"tokenless_pull_interval": 1800})
    assert "at most 30 project(s)" in (slower.token_warning(30) or "")


def test_with_a_token_there_is_nothing_to_warn_about() -> None:
    settings = Settings(github_token="ghp_x", _env_file=None)  # type: ignore[call-arg]
    assert settings.token_warning(30) is None
    assert Settings(database_url="", data_dir="d").resolved_database_url.endswith(
        "/d/digest.sqlite3"
    )
