"""Which labelled sets `python -m bot eval` reads: a numbered blind set alone, or several pooled."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bot.config import Settings
from bot.evaluation.cli import _datasets
from bot.evaluation.datasets import NUMBERED_BLIND


def _write_set(root: Path, name: str, answers: list[str]) -> None:
    (root / name).mkdir(parents=True)
    rows = [{"question": "q", "lang": "en", "grade": 5, "answer": a} for a in answers]
    (root / name / "a.jsonl").write_text("\n".join(json.dumps(r) for r in rows), "utf-8")


def _args(**chosen: bool) -> argparse.Namespace:
    flags = {f"blind{n}": chosen.get(f"blind{n}", False) for n in NUMBERED_BLIND}
    return argparse.Namespace(no_bank=False, no_blind=False, files=[], **flags)


def _settings(root: Path) -> Settings:
    return Settings(content_dir=root / "pytorch")


def test_a_numbered_blind_set_is_read_alone(tmp_path: Path) -> None:
    _write_set(tmp_path, "eval", ["tuning"])
    _write_set(tmp_path, "blind14", ["first", "second"])
    [dataset] = _datasets(_settings(tmp_path), _args(blind14=True))
    assert dataset.name == "content/blind14 (read once)"
    assert [s.answer for s in dataset.samples] == ["first", "second"]


def test_several_numbered_blind_sets_are_read_pooled_as_one(tmp_path: Path) -> None:
    _write_set(tmp_path, "eval", ["tuning"])
    _write_set(tmp_path, "blind14", ["first", "second"])
    _write_set(tmp_path, "blind15", ["third"])
    [dataset] = _datasets(_settings(tmp_path), _args(blind14=True, blind15=True))
    assert dataset.name == "content/blind14 + content/blind15 (read once)"
    assert [s.answer for s in dataset.samples] == ["first", "second", "third"]


def test_without_a_blind_flag_the_tuning_sets_are_read(tmp_path: Path) -> None:
    _write_set(tmp_path, "eval", ["tuning"])
    _write_set(tmp_path, "blind14", ["unread"])
    names = [d.name for d in _datasets(_settings(tmp_path), _args())]
    assert names == ["content/eval (tuning set)"]
