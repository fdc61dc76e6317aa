"""docker/compose.prod.yaml and docker/Caddyfile, checked as far as this machine can: no
container engine runs here (and its client lacks the compose plugin), so the file is parsed and
its wiring checked against the bot's own settings and commands."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bot.__main__ import _parser
from bot.config import Settings

DOCKER = Path(__file__).resolve().parents[1] / "docker"


def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.prod.yaml").read_text("utf-8"))


def test_every_long_running_service_has_a_healthcheck() -> None:
    services = compose()["services"]
    assert {"postgres", "redis", "migrate", "embeddings", "bot-1", "bot-2", "proxy"} <= set(
        services
    )
    for name, service in services.items():
        check = service.get("healthcheck", {})
        if name == "migrate":
            assert check.get("disable") is True and service["restart"] == "no"
        else:
            assert check.get("test"), name


def test_replicas_run_the_webhook_on_shared_services() -> None:
    services = compose()["services"]
    replicas = [name for name in services if re.fullmatch(r"bot-\d+", name)]
    assert len(replicas) >= 2
    caddy = (DOCKER / "Caddyfile").read_text("utf-8")
    fields = set(Settings.model_fields)
    for name in replicas:
        service = services[name]
        env = service["environment"]
        assert env["BOT_MODE"] == "webhook"
        assert env["DATABASE_URL"].startswith("postgresql+asyncpg://")
        assert env["REDIS_URL"].startswith("redis://") and env["EMBEDDINGS_URL"].startswith("http")
        assert {key.lower() for key in env} <= fields  # every variable is a real setting
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert f"{name}:{env['WEBHOOK_PORT']}" in caddy  # the proxy spreads posts over it
        assert env["WEBHOOK_URL"].endswith("/telegram/hook") and "/telegram/hook" in caddy
    assert "health_uri /healthz" in caddy


def test_the_commands_it_runs_exist() -> None:
    services = compose()["services"]
    embeddings = services["embeddings"]
    gpu = embeddings["deploy"]["resources"]["reservations"]["devices"][0]
    assert gpu["capabilities"] == ["gpu"]
    for name in ("migrate", "embeddings"):
        argv = services[name]["command"]
        assert argv[:3] == ["python", "-m", "bot"]
        _parser().parse_args(argv[3:])  # exits on an unknown command or option
