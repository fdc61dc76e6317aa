"""The grading process: the model host (bot/scoring/model_host.py) in a child process, behind
a ProcessPoolExecutor of one worker (GRADER_WORKER=process, the bot's default).

Why a process and not a thread: a forward pass makes about a thousand calls into torch, and each
must take the GIL back from the event loop. With the loop busy (50 people answering at once)
that convoy made a batch ten times slower. The child has its own interpreter and GIL.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.content.loader import QuestionBank
    from bot.scoring.host_config import HostConfig

_host: Any = None


def start(
    factory: Callable[[QuestionBank, HostConfig], Any],
    bank: QuestionBank,
    config: HostConfig,
    parent: int,
    log_level: int,
) -> None:
    """Runs once in the child: builds the host there with `factory(bank, config)`, from the
    same HostConfig as the parent's own host (the parent passes the host's class, so this
    module needs no import of it). The parent owns Ctrl+C and shutdown, and an orphan (its
    parent was killed) exits instead of holding the model's memory."""
    global _host
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    _host = factory(bank, config)


def call(method: Callable[..., Any], *args: Any) -> Any:
    """One of the host's (synchronous) methods, given as the class's function
    (`ModelHost.warm_step`: pickled by name), run on this process's host."""
    assert _host is not None, "worker.start did not run"
    return method(_host, *args)


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
