"""Telegram's length rules for message text, as the renderers need them."""

from __future__ import annotations

from aiogram.utils.formatting import Text

TELEGRAM_TEXT_LIMIT = 4096


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: an emoji outside the BMP is two units."""
    return len(text.encode("utf-16-le")) // 2


def visible_length(node: Text) -> int:
    """Length as Telegram counts it: UTF-16 code units of the text after entity parsing."""
    return utf16_len(node.as_kwargs()["text"])
