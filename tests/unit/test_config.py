"""Settings: defaults that work offline, one-line errors naming the setting."""

from __future__ import annotations

import pytest

from bot.config import ConfigError, load_settings, require_token, require_webhook


def test_defaults_work_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BOT_TOKEN", "DATABASE_URL", "EMBEDDING_MODEL", "EMBEDDING_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(_env_file=None)
    assert settings.database_url.startswith("sqlite+aiosqlite:///./data/")
    assert settings.embedding_model == "multilingual-e5-small"
    assert settings.embedding_device == "auto"
    with pytest.raises(ConfigError, match="missing setting BOT_TOKEN"):
        require_token(settings)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BOT_TOKEN", "not-a-token"),
        ("EMBEDDING_DEVICE", "tpu"),
        ("ADMIN_IDS", "1,x"),
        ("LOG_LEVEL", "loud"),
        ("TELEGRAM_API_URL", "localhost:8081"),
        ("BOT_MODE", "carrier-pigeon"),
        ("WEBHOOK_URL", "bot.example.com/hook"),
        ("WEBHOOK_URL", "http://bot.example.com/hook"),
        ("UPDATE_ATTEMPTS", "0"),
        ("WEBHOOK_SECRET", "has spaces and ✓"),
    ],
)
def test_invalid_setting_is_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as error:
        load_settings(_env_file=None)
    assert str(error.value).startswith(f"invalid setting {name}:")
    assert "\n" not in str(error.value)


def test_admin_ids_and_api_url_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADMIN_IDS", "1, 22 333")
    monkeypatch.setenv("TELEGRAM_API_URL", "http://127.0.0.1:8081/")
    settings = load_settings(_env_file=None)
    assert settings.admin_ids == (1, 22, 333)
    assert settings.telegram_api_url == "http://127.0.0.1:8081"


def test_webhook_mode_names_what_it_lacks() -> None:
    settings = load_settings(_env_file=None, bot_mode="webhook")
    with pytest.raises(ConfigError, match="missing setting WEBHOOK_URL"):
        require_webhook(settings)
    settings = load_settings(_env_file=None, bot_mode="webhook", webhook_url="https://x.org/h")
    with pytest.raises(ConfigError, match="missing setting WEBHOOK_SECRET"):
        require_webhook(settings)
    settings = load_settings(
        _env_file=None, bot_mode="webhook", webhook_url="https://x.org/h", webhook_secret="a-b_1"
    )
    assert require_webhook(settings) == ("https://x.org/h", "a-b_1")


def test_a_plain_http_webhook_url_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Telegram posts only to HTTPS: an http:// WEBHOOK_URL is a clear error when the settings
    load (before anything starts), not a refused setWebhook later."""
    monkeypatch.setenv("WEBHOOK_URL", "http://bot.example.com/telegram/hook")
    with pytest.raises(ConfigError, match=r"invalid setting WEBHOOK_URL: .*https://"):
        load_settings(_env_file=None)
    monkeypatch.setenv("WEBHOOK_URL", "https://bot.example.com/telegram/hook")
    assert load_settings(_env_file=None).webhook_url == "https://bot.example.com/telegram/hook"
