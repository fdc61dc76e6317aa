"""A PostgreSQL or Redis test where the service is absent: skipped with the reason locally,
a failure under REQUIRE_SERVICES=1 (what .ci/run sets), so CI cannot go green without them."""

from __future__ import annotations

import pytest

from tests.services import unavailable

ABSENT = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 6379)")


def test_without_the_variable_an_absent_service_skips_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REQUIRE_SERVICES", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"Redis at 127\.0\.0\.1:6379 unusable"):
        unavailable("Redis at 127.0.0.1:6379", ABSENT)


@pytest.mark.parametrize("value", ["1", "true"])
def test_with_require_services_an_absent_service_fails(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("REQUIRE_SERVICES", value)
    with pytest.raises(pytest.fail.Exception, match="REQUIRE_SERVICES=1"):
        unavailable("PostgreSQL at 127.0.0.1:5432", ABSENT)


def test_ci_requires_the_services() -> None:
    from pathlib import Path

    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text("utf-8")
    assert "REQUIRE_SERVICES=1" in ci
