"""PostgreSQL and Redis in the tests: where they are absent a test that needs them skips with the
reason, so the README's test command passes on any machine; with REQUIRE_SERVICES=1 (CI, which
runs both on 127.0.0.1) the same absence is a failure, so a green run proves they were tested."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def required() -> bool:
    return os.environ.get("REQUIRE_SERVICES", "") not in ("", "0")


def unavailable(service: str, exc: BaseException) -> NoReturn:
    reason = f"{service} unusable: {exc!r}"
    if required():
        pytest.fail(f"{reason} (REQUIRE_SERVICES=1: this test must run here)", pytrace=False)
    pytest.skip(reason)
