"""A group's row and round settings (level, language, who may manage), and the bot leaving it."""

from __future__ import annotations

from dataclasses import dataclass

from bot.content.schema import Language, Level
from bot.services.rounds.base import RoundsBase, once_more_on_conflict
from bot.services.rounds.states import move_round
from bot.storage import rounds_queries as queries
from bot.storage.models import GroupChat
from bot.storage.round_moves import end_questions
from bot.storage.statuses import RoundStatus


@dataclass(frozen=True)
class GroupView:
    id: int
    language: Language
    level: Level
    allow_everyone: bool
    active: bool


def _view(group: GroupChat) -> GroupView:
    return GroupView(group.id, group.language, group.level, group.allow_everyone, group.active)


class GroupsMixin(RoundsBase):
    async def ensure_group(
        self, chat_id: int, title: str | None = None, language: Language = "en"
    ) -> GroupView:
        return await once_more_on_conflict(lambda: self._ensure_group(chat_id, title, language))

    async def _ensure_group(self, chat_id: int, title: str | None, language: Language) -> GroupView:
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is None:
                group = GroupChat(id=chat_id, title=title, language=language, level=Level.junior)
                session.add(group)
                await session.flush()
            elif not group.active:
                group.active = True
            if title and group.title != title:
                group.title = title
            return _view(group)

    async def group(self, chat_id: int) -> GroupView | None:
        async with self.sessions() as session:
            group = await session.get(GroupChat, chat_id)
            return _view(group) if group else None

    async def update_group(
        self,
        chat_id: int,
        *,
        level: Level | None = None,
        language: Language | None = None,
        allow_everyone: bool | None = None,
    ) -> GroupView:
        return await once_more_on_conflict(
            lambda: self._update_group(chat_id, level, language, allow_everyone)
        )

    async def _update_group(
        self,
        chat_id: int,
        level: Level | None,
        language: Language | None,
        allow_everyone: bool | None,
    ) -> GroupView:
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is None:
                group = GroupChat(id=chat_id, language=language or "en", level=Level.junior)
                session.add(group)
            if level is not None:
                group.level = Level(level)
            if language is not None:
                group.language = language
            if allow_everyone is not None:
                group.allow_everyone = allow_everyone
            await session.flush()
            return _view(group)

    async def bot_removed(self, chat_id: int) -> bool:
        """The bot left or was removed: end the round without owing the group any message."""
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is not None:
                group.active = False
            rounds = await queries.running_rounds(session, chat_id)
            for round_ in rounds:
                move_round(round_, RoundStatus.stopped, self.clock())
                await end_questions(session, round_.id, self.clock())
            return bool(rounds)
