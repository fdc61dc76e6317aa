"""The round service: one class over the mixins, each holding one concern of group rounds."""

from __future__ import annotations

from bot.services.rounds.answers import AnswersMixin
from bot.services.rounds.grading import GradingMixin
from bot.services.rounds.groups import GroupsMixin
from bot.services.rounds.lifecycle import LifecycleMixin
from bot.services.rounds.outbox import OutboxMixin


class RoundService(GroupsMixin, LifecycleMixin, AnswersMixin, GradingMixin, OutboxMixin):
    """Group rounds: groups (settings), lifecycle (start, stop, close, expire, due), answers
    (replies and quiz votes), grading (closed questions), outbox (what the group is owed).

    Built with the sessions, the bank, the scoring service, and optionally a clock, a random
    generator and the shortest time per question (see RoundsBase)."""
