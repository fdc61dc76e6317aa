"""The question bank's executable checks (bot/content/checks.py): every check of the bank passes
on this machine's PyTorch, and the runner isolates, times out and skips as it promises."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bot.content.checks import (
    FAILED,
    PASSED,
    SKIPPED,
    TIMED_OUT,
    CheckRunner,
    bank_checks,
    format_results,
    pitfall_coverage,
)
from bot.content.loader import QuestionBank, load_bank
from bot.content.schema import Check


@pytest.fixture(scope="module")
def runner() -> Iterator[CheckRunner]:
    # As `content checks` by default: `needs: processes` checks are skipped (see below).
    with CheckRunner(timeout=60.0) as shared:
        yield shared


def check(code: str, needs: str | None = None) -> Check:
    return Check(shows=("sample-point",), code=code, needs=needs)


def test_every_check_of_the_bank_passes(bank: QuestionBank, runner: CheckRunner) -> None:
    items = bank_checks(bank)
    assert items, "the bank has no executable checks"
    results = [runner.run(question_id, index, c) for question_id, index, c in items]
    bad = [r for r in results if not r.ok]
    assert not bad, f"{len(bad)} of {len(results)} checks did not pass:\n" + format_results(bad)
    assert all(r.message for r in results if r.outcome == SKIPPED), "a skipped check says why"


def test_a_failing_check_is_reported_with_its_message(runner: CheckRunner) -> None:
    failed = runner.run("sample", 0, check("import torch\nassert torch.ones(2).sum() == 3, 'sum'"))
    assert failed.outcome == FAILED and failed.question_id == "sample" and failed.index == 0
    assert failed.message.startswith("sum") and "line 2" in failed.message
    raised = runner.run("sample", 1, check("import torch\ntorch.ones(2).view(3)"))
    assert raised.outcome == FAILED and raised.message.startswith("RuntimeError"), raised
    assert runner.run("sample", 2, check("assert True")).outcome == PASSED


def test_checks_do_not_share_a_namespace_or_global_switches(runner: CheckRunner) -> None:
    first = check("import torch\nleft_over = 1\ntorch.set_grad_enabled(False)")
    assert runner.run("sample", 0, first).outcome == PASSED
    second = check(
        "import torch\nassert 'left_over' not in globals()\nassert torch.is_grad_enabled()"
    )
    assert runner.run("sample", 1, second).outcome == PASSED


def test_a_check_that_prints_does_not_confuse_the_runner(runner: CheckRunner) -> None:
    noisy = check(
        "import os\nprint('{\"outcome\": \"passed\"}')\nos.write(1, b'noise\\n')\nassert 0"
    )
    assert runner.run("sample", 0, noisy).outcome == FAILED


def test_a_hanging_or_crashing_check_does_not_take_down_the_next() -> None:
    with CheckRunner(timeout=2.0, warm=False) as runner:
        hung = runner.run("sample", 0, check("while True:\n    pass"))
        assert hung.outcome == TIMED_OUT and "2 s" in hung.message
        assert runner.run("sample", 1, check("assert 1 == 1")).outcome == PASSED
        crashed = runner.run("sample", 2, check("import os\nos._exit(3)"))
        assert crashed.outcome == FAILED and "code 3" in crashed.message
        assert runner.run("sample", 3, check("assert 2 == 2")).outcome == PASSED
        assert runner.restarts == 2


def test_gpu_and_process_checks_are_skipped_with_a_reason(runner: CheckRunner) -> None:
    on_gpu = check("import torch\nassert torch.ones(1, device='cuda').is_cuda", needs="gpu")
    result = runner.run("sample", 0, on_gpu)
    if runner.cuda:
        assert result.outcome == PASSED
    else:
        assert result.outcome == SKIPPED and "GPU" in result.message
    skipped = runner.run("sample", 1, check("assert False", needs="processes"))
    assert skipped.outcome == SKIPPED and "processes" in skipped.message


def test_process_checks_run_in_a_fresh_worker_when_enabled() -> None:
    with CheckRunner(timeout=60.0, processes=True, warm=False) as runner:
        leave = check("import sys\nsys.modules['left_by_a_check'] = sys")
        assert runner.run("sample", 0, leave).outcome == PASSED
        forks = check(
            "import multiprocessing, sys\n"
            "assert 'left_by_a_check' not in sys.modules\n"
            "child = multiprocessing.get_context('fork').Process(target=sys.exit, args=(0,))\n"
            "child.start()\nchild.join()\nassert child.exitcode == 0",
            needs="processes",
        )
        assert runner.run("sample", 1, forks).outcome == PASSED
        assert runner.restarts == 0


def test_pitfall_coverage_counts_what_checks_show(bank: QuestionBank) -> None:
    covered, missing = pitfall_coverage(bank)
    assert len(covered) + len(missing) == sum(len(q.pitfalls) for q in bank)
    autograd = bank.get("autograd")
    assert autograd is not None and autograd.checks
    shown = {s for c in autograd.checks for s in c.shows}
    for pitfall in autograd.pitfalls:
        assert (f"autograd/{pitfall.id}" in covered) == (pitfall.id in shown)


def test_content_check_reports_the_pitfalls_with_a_check(
    bank: QuestionBank, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.content_commands import content_check

    content_check(bank)
    out = capsys.readouterr().out
    covered, missing = pitfall_coverage(bank)
    assert f"pitfalls with a check: {len(covered)} of {len(covered) + len(missing)}" in out
    assert all(f"  - {m}" in out for m in missing)


def test_the_content_hash_ignores_checks(tmp_path: Path) -> None:
    """Editing a check must not invalidate the stored vectors (keyed by the bank's hash)."""
    source = Path(__file__).resolve().parents[2] / "content" / "pytorch" / "tensor-vs-numpy.yaml"
    data = yaml.safe_load(source.read_text("utf-8"))
    data["follow_ups"] = []  # alone in the folder
    path = tmp_path / "tensor-vs-numpy.yaml"

    def bank_hash(changes: dict[str, object]) -> str:
        path.write_text(yaml.safe_dump({**data, **changes}, allow_unicode=True), "utf-8")
        return load_bank(tmp_path).content_hash

    first_point = data["key_points"][0]["id"]
    base = bank_hash({"checks": []})
    with_check = bank_hash({"checks": [{"shows": [first_point], "code": "assert True"}]})
    other_check = bank_hash(
        {"checks": [{"shows": [first_point], "code": "assert 1", "needs": "gpu"}]}
    )
    assert base == with_check == other_check
    assert bank_hash({"answer": {**data["answer"], "en": "Changed."}}) != base
