"""Queries live in bot/storage: services and handlers call named methods and never build SQL.
They may still hold a session (sqlalchemy.ext.asyncio: they own the transactions) and catch
sqlalchemy.exc errors. import-linter cannot tell sqlalchemy's subpackages apart, hence this test."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "bot"
ALLOWED = {"sqlalchemy.ext.asyncio", "sqlalchemy.exc"}
ABOVE_STORAGE = sorted(
    p for package in ("services", "telegram") for p in (ROOT / package).rglob("*.py")
)


def sqlalchemy_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [m for m in found if m.split(".")[0] == "sqlalchemy" and m not in ALLOWED]


def test_the_check_sees_a_query_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from sqlalchemy import select\nimport sqlalchemy.orm\n", encoding="utf-8")
    assert sqlalchemy_imports(module) == ["sqlalchemy", "sqlalchemy.orm"]


def test_no_sql_above_storage() -> None:
    assert len(ABOVE_STORAGE) > 50  # the packages were found
    building = {
        str(path.relative_to(ROOT)): imports
        for path in ABOVE_STORAGE
        if (imports := sqlalchemy_imports(path))
    }
    assert building == {}, "these build SQL: move the queries to bot/storage"
