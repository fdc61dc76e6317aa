"""`python -m bot questions` and `python -m bot content check|checks`: the bank as a table or
JSON, its coverage (levels, topics, stance examples, executable checks), and running its checks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bot.cli_output import fail
from bot.content.loader import QuestionBank
from bot.i18n import TEXTS


def questions_command(bank: QuestionBank, level: str | None, as_json: bool) -> int:
    rows = [q for q in bank if level is None or q.level == level]
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "id": q.id,
                        "level": q.level.value,
                        "frequency": q.frequency.value,
                        "topics": list(q.topics),
                        "question": {"ru": q.question.ru, "en": q.question.en},
                        "key_points": [k.id for k in q.key_points],
                        "pitfalls": [p.id for p in q.pitfalls],
                        "follow_ups": list(q.follow_ups),
                    }
                    for q in rows
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        for q in rows:
            print(f"{q.id:32} {q.level.value:7} {q.frequency.value:9} {q.question.en}")
    return 0


def content_check(bank: QuestionBank, stance_dir: Path | None = None) -> int:
    """The bank's coverage table and warnings, and which pitfalls have an executable check (it
    does not run them: `content checks` does); fails (1) when the stance examples do not cover
    every pitfall (bot/content/stance.py)."""
    from bot.content.checks import pitfall_coverage
    from bot.content.stance import (
        DEFAULT_STANCE_DIR,
        StanceError,
        example_count,
        load_stance,
        stance_problems,
    )

    levels = Counter(q.level.value for q in bank)
    topics: dict[str, Counter[str]] = {}
    for q in bank:
        for topic in q.topics:
            topics.setdefault(topic, Counter())[q.level.value] += 1
    print(
        f"{len(bank)} questions: "
        + ", ".join(f"{k} {levels[k]}" for k in ("junior", "middle", "senior"))
    )
    print(f"\n{'topic':16} {'junior':>7} {'middle':>7} {'senior':>7}")
    for topic in sorted(topics):
        c = topics[topic]
        print(f"{topic:16} {c['junior']:7} {c['middle']:7} {c['senior']:7}")
    warnings = [
        f"topic {topic}: no display name (add topic.{topic} to bot/i18n.py)"
        for topic in sorted(topics)
        if f"topic.{topic}" not in TEXTS
    ]
    for q in bank:
        for lang in ("ru", "en"):
            if q.short_answer is None:
                warnings.append(f"{q.id}: no short_answer")
                break
            if len(q.short_answer.get(lang)) > 90:
                warnings.append(f"{q.id}: short_answer.{lang} over 90 characters")
    print("\nwarnings:" if warnings else "\nno warnings")
    for w in warnings:
        print(f"  - {w}")
    covered, missing = pitfall_coverage(bank)
    total = len(covered) + len(missing)
    print(
        f"\nexecutable checks: {sum(len(q.checks) for q in bank)} in "
        f"{sum(1 for q in bank if q.checks)} questions (run: python -m bot content checks)"
    )
    print(
        f"pitfalls with a check: {len(covered)} of {total} "
        f"({100 * len(covered) / max(total, 1):.0f} %, target 80 %)"
    )
    if missing:
        print("pitfalls without a check:")
    for pitfall in missing:
        print(f"  - {pitfall}")
    try:
        stance = load_stance(stance_dir or DEFAULT_STANCE_DIR, corrections=True)
    except StanceError as exc:
        print(f"\nstance examples: {exc}")
        return 1
    problems = stance_problems(bank, stance)
    counts = example_count(stance.values())
    print(
        f"\nstance examples: {len(stance)} questions, "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
    )
    for problem in problems:
        print(f"  - {problem}")
    return 1 if problems else 0


def run_content_checks(
    bank: QuestionBank, timeout: float, processes: bool, only: list[str] | None
) -> int:
    """Runs the bank's executable checks (bot/content/checks.py) and prints a table; fails (1)
    when one fails or times out."""
    from bot.content.checks import CheckRunnerError, bank_checks, format_results, run_checks

    unknown = sorted(set(only or ()) - set(bank.questions))
    if unknown:
        return fail(f"unknown question ids: {', '.join(unknown)}")
    items = [item for item in bank_checks(bank) if not only or item[0] in only]
    try:
        results = run_checks(items, timeout, processes=processes)
    except CheckRunnerError as exc:
        return fail(str(exc))
    if results:
        print(format_results(results))
    counts = Counter(r.outcome for r in results)
    print(
        f"\n{len(results)} checks: "
        + ", ".join(f"{counts[k]} {k}" for k in ("passed", "failed", "timed out", "skipped"))
        + f"; {sum(r.seconds for r in results):.1f} s in checks"
    )
    return 0 if all(r.ok for r in results) else 1
