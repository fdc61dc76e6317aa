"""What a group is owed during a round, read from the database; the Telegram side renders them.

The runner sends each item and then marks it sent, so a restart between a state change and its
message loses nothing (at worst a message is sent twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.content.schema import Language, Question
from bot.services.outbox import FeedbackItem


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
    """Detailed feedback on one group answer, sent to the participant's private chat: the
    feedback every answer gets, addressed to that chat, and what is particular to a round."""

    feedback: FeedbackItem  # its chat_id is the participant's private chat, i.e. their user id
    chat_id: int  # the group it was answered in
    language: Language  # the participant's language, not the group's

    @property
    def answer_id(self) -> int:
        return self.feedback.answer_id

    @property
    def user_id(self) -> int:
        return self.feedback.chat_id

    @property
    def question(self) -> Question:
        return self.feedback.question

    @property
    def score(self) -> float:
        return self.feedback.score

    @property
    def covered(self) -> list[str]:
        return self.feedback.covered

    @property
    def missed(self) -> list[str]:
        return self.feedback.missed

    @property
    def pitfalls(self) -> list[str]:
        return self.feedback.pitfalls


GroupItem = RoundQuestionItem | ResultsItem | LeaderboardItem | PrivateFeedbackItem
