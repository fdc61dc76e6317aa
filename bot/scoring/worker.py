"""The grading process: a ScoringService of its own, in a child process, behind a
ProcessPoolExecutor of one worker (GRADER_WORKER=process, the bot's default).

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.scoring.service import ScoringService

_service: ScoringService | None = None


def start(config: dict[str, Any], parent: int, log_level: int) -> None:
    """Runs once in the child: the parent owns Ctrl+C and shutdown, and an orphan (its parent
    was killed) exits instead of holding the model's memory."""
    from bot.scoring.service import ScoringService

    global _service
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    _service = ScoringService(**config, worker="thread")


def call(method: str, *args: Any) -> Any:
    """One of the service's own (synchronous) methods, run here."""
    assert _service is not None, "worker.start did not run"
    return getattr(_service, method)(*args)


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
