"""What the model host (bot/scoring/model_host.py) is built from, less the bank: one frozen
value, made once, that the host in this process and the one in the grading process
(bot/scoring/worker.py, which receives it pickled) are both built from, so the two can never be
configured apart."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.config import Settings
from bot.scoring.options import GraderOptions


def grader_options(settings: Settings) -> GraderOptions:
    """The grader's switches that the settings (the environment) turn on and off."""
    return GraderOptions(
        encode_whole=settings.grader_whole_answer_pass,
        one_pass=settings.grader_one_pass,
        stance=settings.grader_stance,
        relevance=settings.grader_relevance,
    )


@dataclass(frozen=True)
class HostConfig:
    """`model`, `device`, `precision`: the embedding model and where and how it runs (`auto`:
    bot/scoring/device.py decides). `cache_dir`: where the bank's vectors are stored (None: not
    stored). `model_cache_dir`: where converted models live. `threads`: torch's threads while
    grading (bot/scoring/model_host.py, `set_cpu_threads`). `embeddings_url`: vectors from an
    embedding server (TEI's API) instead of a model loaded here; the grading around them stays
    here. `background_warm`: with no stored vectors, the warm-up computes only what every grade
    needs (the calibration, from all key points) and the rest of the bank afterwards, a
    question at a time whenever no grade is waiting (the bot; the CLI tools warm everything
    first)."""

    model: str
    device: str
    cache_dir: Path | None = None
    options: GraderOptions | None = None
    model_cache_dir: Path | None = None
    precision: str = "auto"
    threads: int | None = None
    embeddings_url: str | None = None
    background_warm: bool = False

    @classmethod
    def from_settings(
        cls, settings: Settings, options: GraderOptions | None = None, serving: bool = False
    ) -> HostConfig:
        """`serving`: as the bot runs it (GRADER_THREADS, the background warm-up); else on
        every core, warming everything first (the CLI tools)."""
        return cls(
            model=settings.embedding_model,
            device=settings.embedding_device,
            cache_dir=settings.embedding_cache_dir,
            options=options or grader_options(settings),
            model_cache_dir=settings.model_cache_dir,
            precision=settings.embedding_precision,
            threads=settings.grader_threads if serving else None,
            embeddings_url=settings.embeddings_url,
            background_warm=serving,
        )
