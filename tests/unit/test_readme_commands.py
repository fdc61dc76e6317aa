"""Every `python -m bot …` command the README (and docs/deploy.md) shows is one the bot accepts:
each is parsed by the bot's own argparse parser, in this process (a wrong subcommand, option or
value fails here), and its subcommand's --help exits cleanly. `run`, which needs a token, is run
for real without one: it must stop at once with the one-line error, before anything starts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from bot.__main__ import _parser, main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "docs" / "deploy.md"]
COMMAND = re.compile(r"python -m bot\b(?P<rest>[^`\n]*)")


def shown_commands() -> list[tuple[str, list[str]]]:
    """(where, argv after `python -m bot`) for each command in a code block or inline code."""
    found = []
    for doc in DOCS:
        in_block = False
        for number, line in enumerate(doc.read_text("utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            # Inline code spans, or the whole line inside a code block.
            spans = [line] if in_block else re.findall(r"`([^`]+)`", line)
            for span in spans:
                for match in COMMAND.finditer(span):
                    rest = match.group("rest")
                    if not in_block and not rest.strip():
                        continue  # prose naming the tool: "`python -m bot`"
                    argv = shlex.split(rest, comments=True)
                    found.append((f"{doc.name}:{number}", argv))
    return found


COMMANDS = shown_commands()


def test_the_docs_show_the_commands_people_need() -> None:
    shown = {argv[0] for _, argv in COMMANDS if argv}
    assert {"run", "practice", "grade", "warm", "migrate", "embed-server", "stats"} <= shown
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize(("where", "argv"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_each_shown_command_parses(where: str, argv: list[str]) -> None:
    assert argv, f"{where}: `python -m bot` with no command"
    try:
        _parser().parse_args(argv)
    except SystemExit as exc:  # argparse's way of refusing: it has printed why
        pytest.fail(f"{where}: python -m bot {shlex.join(argv)} is refused (exit {exc.code})")


@pytest.mark.parametrize("command", sorted({argv[0] for _, argv in COMMANDS if argv}))
def test_each_shown_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        _parser().parse_args([command, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m bot {command}")


def test_run_without_a_token_stops_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dry run of `python -m bot run`: no token in the environment nor in a .env (the
    working directory is an empty folder), so it must refuse before loading any model."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOT_TOKEN", raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}")
    assert main(["run"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: missing setting BOT_TOKEN") and error.count("\n") == 1
