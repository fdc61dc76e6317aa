"""What a group is owed during a round, read from the database; the Telegram side renders them.

The runner sends each item and then marks it sent, so a restart between a state change and its
message loses nothing (at worst a message is sent twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.content.schema import Question


@dataclass(frozen=True)
class RoundQuestionItem:
    round_question_id: int
    round_id: int
    chat_id: int
    question: Question
    position: int  # 1-based
    total: int
    seconds: int
    options: tuple[str, ...] = ()  # quiz: question ids whose short answers are the options
    correct_option: int | None = None


@dataclass(frozen=True)
class ScoreLine:
    user_id: int
    name: str
    score: float | None  # None: took part in the round but did not answer this question
    rank: int | None


@dataclass(frozen=True)
class ResultsItem:
    round_question_id: int
    chat_id: int
    question: Question | None  # None: the question left the bank since it was asked
    position: int  # 1-based
    total: int
    lines: list[ScoreLine]
    best_covered: list[str]  # key-point ids covered by the best answer
    pitfalls: dict[str, int]  # pitfall id -> how many participants fell into it
    question_message_id: int | None
    correct_option: str | None = None  # quiz: the question id whose short answer was right


@dataclass(frozen=True)
class Standing:
    user_id: int
    name: str
    total: float
    answers: int
    rank: int


@dataclass(frozen=True)
class LeaderboardItem:
    round_id: int
    chat_id: int
    questions: int
    standings: list[Standing] = field(default_factory=list)


@dataclass(frozen=True)
class PrivateFeedbackItem:
    """Detailed feedback on one group answer, sent to the participant's private chat."""

    answer_id: int
    chat_id: int  # the group it was answered in
    user_id: int
    language: str
    question: Question
    score: float
    verdict: str
    covered: list[str]
    missed: list[str]
    pitfalls: list[str]


GroupItem = RoundQuestionItem | ResultsItem | LeaderboardItem | PrivateFeedbackItem
