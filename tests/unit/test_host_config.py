"""HostConfig: the one value the model host is built from, in this process and in the grading
process; the settings decide it once."""

from __future__ import annotations

import pickle

import pytest

from bot.config import load_settings
from bot.content.loader import QuestionBank
from bot.scoring.host_config import HostConfig, grader_options
from bot.scoring.service import ScoringService


def test_serving_and_cli_configs_differ_only_where_the_bot_runs_differently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADER_THREADS", "3")
    monkeypatch.setenv("EMBEDDINGS_URL", "http://embed:80")
    settings = load_settings(_env_file=None)
    cli = HostConfig.from_settings(settings)
    serving = HostConfig.from_settings(settings, serving=True)
    assert (cli.threads, cli.background_warm) == (None, False)  # every core, warm first
    assert (serving.threads, serving.background_warm) == (3, True)
    assert cli.model == serving.model == settings.embedding_model
    assert cli.embeddings_url == "http://embed:80"
    assert cli.options == grader_options(settings)
    # The grading process receives it pickled: it must come back equal.
    assert pickle.loads(pickle.dumps(serving)) == serving


def test_the_service_hands_its_host_the_config_it_was_built_from(
    monkeypatch: pytest.MonkeyPatch, bank: QuestionBank
) -> None:
    monkeypatch.setenv("GRADER_WORKER", "process")
    settings = load_settings(_env_file=None)
    serving = ScoringService.from_settings(settings, bank, serving=True)
    keywords = ScoringService(bank, HostConfig("bundled", "cpu", threads=2, background_warm=True))
    try:
        assert serving.config == HostConfig.from_settings(settings, serving=True)
        assert serving.host.config is serving.config
        assert serving.worker == "process" and serving.max_batch == settings.grader_max_batch
        assert keywords.host.config == HostConfig("bundled", "cpu", threads=2, background_warm=True)
        assert keywords.worker == "thread"
    finally:
        serving.close()
        keywords.close()
