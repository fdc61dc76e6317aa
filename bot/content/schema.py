"""Pydantic schema of one question-bank file (one YAML file per question)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# The bot's languages: every text of the bank, of the bot, and every stored language is one.
Language = Literal["ru", "en"]
LANGUAGES: tuple[Language, ...] = ("ru", "en")


class Level(StrEnum):
    junior = "junior"
    middle = "middle"
    senior = "senior"


class Frequency(StrEnum):
    always = "always"
    often = "often"
    sometimes = "sometimes"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(Strict):
    """The same statement in both languages."""

    ru: str = Field(min_length=1)
    en: str = Field(min_length=1)

    def get(self, lang: str) -> str:
        return self.ru if lang == "ru" else self.en


def _check_id(value: str) -> str:
    if not ID_PATTERN.match(value):
        raise ValueError(f"id {value!r} must be kebab-case (a-z, 0-9, '-')")
    return value


class KeyPoint(Strict):
    id: str
    weight: float = Field(default=1.0, gt=0, le=5)
    ru: str = Field(min_length=1)
    en: str = Field(min_length=1)
    # Identifiers (API names) that signal this point in any language.
    terms: tuple[str, ...] = ()

    _id = field_validator("id")(_check_id)

    def text(self, lang: str) -> str:
        return self.ru if lang == "ru" else self.en


class Markers(Strict):
    """Word prefixes that carry a misconception's wrong idea ("weight" for "dropout zeroes the
    weights"); a phrase of several prefixes needs all of them in the sentence, in any order. A
    sentence is said to hold the misconception only if it has one (bot/scoring/pitfalls.py)."""

    ru: tuple[str, ...] = Field(min_length=1)
    en: tuple[str, ...] = Field(min_length=1)

    @field_validator("ru", "en")
    @classmethod
    def _lowercase(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not m.strip() or m != m.lower() for m in value):
            raise ValueError("markers are lowercase word prefixes")
        return value


class Pitfall(Strict):
    id: str
    claim: Text
    correction: Text
    markers: Markers | None = None

    _id = field_validator("id")(_check_id)


class Check(Strict):
    """A short Python snippet, run on CPU PyTorch by the test suite, that demonstrates what the
    question claims: `shows` names the key point or pitfall (its correction) it proves."""

    shows: tuple[str, ...] = Field(min_length=1)
    code: str
    needs: str | None = None  # "gpu" or "processes": skipped where the machine lacks it

    @field_validator("needs")
    @classmethod
    def _known_need(cls, value: str | None) -> str | None:
        if value not in (None, "gpu", "processes"):
            raise ValueError("needs is gpu or processes")
        return value


class Question(Strict):
    id: str
    level: Level
    frequency: Frequency = Frequency.sometimes
    topics: tuple[str, ...] = Field(min_length=1)
    question: Text
    answer: Text
    short_answer: Text | None = None
    key_points: tuple[KeyPoint, ...] = Field(min_length=3, max_length=7)
    pitfalls: tuple[Pitfall, ...] = Field(min_length=1, max_length=4)
    follow_ups: tuple[str, ...] = ()
    code: str | None = None
    checks: tuple[Check, ...] = ()

    _id = field_validator("id")(_check_id)

    @model_validator(mode="after")
    def _unique_inner_ids(self) -> Question:
        for kind, ids in (
            ("key point", [k.id for k in self.key_points]),
            ("pitfall", [p.id for p in self.pitfalls]),
        ):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise ValueError(f"duplicate {kind} ids: {', '.join(dupes)}")
        if self.id in self.follow_ups:
            raise ValueError("a question cannot follow up on itself")
        known = {k.id for k in self.key_points} | {p.id for p in self.pitfalls}
        unknown = sorted({s for c in self.checks for s in c.shows} - known)
        if unknown:
            raise ValueError(f"checks show unknown key points or pitfalls: {', '.join(unknown)}")
        return self

    def key_point(self, point_id: str) -> KeyPoint:
        return next(k for k in self.key_points if k.id == point_id)

    def pitfall(self, pitfall_id: str) -> Pitfall:
        return next(p for p in self.pitfalls if p.id == pitfall_id)
