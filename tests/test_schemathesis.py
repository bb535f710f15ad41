"""A bounded schemathesis run over the OpenAPI of the app: no generated request gets a 500."""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from tests.conftest import bearer

EXAMPLES_PER_OPERATION = 10


def test_no_generated_request_gets_a_server_error(factory: sessionmaker[Session]) -> None:
    admin = bearer(factory, "admin", "fuzzer")
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(factory))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30
    failures: list[str] = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def exercise(case: Any) -> None:
            response = case.call(headers=admin)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.text[:300]}")

        exercise()
    assert failures == []
