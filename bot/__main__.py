"""CLI: run | practice | grade | questions | content check."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections import Counter
from pathlib import Path

from bot.config import ConfigError, Settings, load_settings
from bot.content.loader import BankError, QuestionBank, load_bank


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="run the Telegram bot (long polling; applies migrations)")
    practice = sub.add_parser("practice", help="a mock interview in the terminal")
    practice.add_argument("args", nargs="*", help="[junior|middle|senior] [N]")
    practice.add_argument("--lang", choices=("ru", "en"), default="en")
    grade = sub.add_parser("grade", help="grade answers")
    grade.add_argument("--question", help="bank question id")
    grade.add_argument("--answer", help="the answer text")
    grade.add_argument("--lang", choices=("ru", "en"), help="answer language (default: detect)")
    grade.add_argument("--batch", type=Path, help="JSON lines {question, answer, lang}")
    grade.add_argument("--json", action="store_true", help="print JSON")
    questions = sub.add_parser("questions", help="list the bank")
    questions.add_argument("--json", action="store_true")
    questions.add_argument("--level", choices=("junior", "middle", "senior"))
    content = sub.add_parser("content", help="content tools")
    content.add_argument("action", choices=("check",))
    return parser


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _questions(bank: QuestionBank, level: str | None, as_json: bool) -> int:
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


def _content_check(bank: QuestionBank) -> int:
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
    warnings = []
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
    return 0


def _grade(settings: Settings, bank: QuestionBank, args: argparse.Namespace) -> int:
    from bot.scoring.service import ScoringService

    if args.batch is None and (args.question is None or args.answer is None):
        return _fail("give --question ID --answer TEXT, or --batch FILE")
    if args.batch is not None:
        try:
            lines = [json.loads(x) for x in args.batch.read_text("utf-8").splitlines() if x.strip()]
        except (OSError, json.JSONDecodeError) as exc:
            return _fail(f"cannot read {args.batch}: {exc}")
        jobs = [(r.get("question"), r.get("answer", ""), r.get("lang")) for r in lines]
    else:
        jobs = [(args.question, args.answer, args.lang)]
    unknown = sorted({q for q, _, _ in jobs if bank.get(str(q)) is None})
    if unknown:
        return _fail("unknown question id(s): " + ", ".join(map(str, unknown)))
    scoring = ScoringService(bank, settings.embedding_model, settings.embedding_device)
    try:
        for question_id, answer, lang in jobs:
            result = scoring.grade_blocking(bank.questions[question_id], str(answer), lang)
            if args.json:
                print(json.dumps(result.to_json(), ensure_ascii=False), flush=True)
            else:
                print(
                    f"{question_id}: {result.score}/10 {result.verdict} "
                    f"covered={result.covered} missed={result.missed} "
                    f"pitfalls={[p.id for p in result.pitfalls]}"
                )
    finally:
        scoring.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        logging.basicConfig(
            level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        bank = load_bank(settings.content_dir)
    except (ConfigError, BankError) as exc:
        return _fail(str(exc))
    if args.command == "questions":
        return _questions(bank, args.level, args.json)
    if args.command == "content":
        return _content_check(bank)
    if args.command == "grade":
        return _grade(settings, bank, args)
    if args.command == "practice":
        from bot.practice import parse_practice_args, practice

        level, count = parse_practice_args(args.args)
        return asyncio.run(practice(settings, args.lang, level, count))
    from bot.app import run

    try:
        run(settings)
    except ConfigError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
