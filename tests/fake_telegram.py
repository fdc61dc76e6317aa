"""A small fake Telegram Bot API server (aiohttp.web) for end-to-end tests.

It speaks the real HTTP protocol aiogram uses (`/bot{token}/{method}`), keeps chats and messages,
serves getUpdates as a long poll honouring offset and timeout, and rejects what Telegram rejects
with Telegram's JSON error shape: malformed HTML (in messages and poll options), empty text, text
over 4096 characters, callback_data over 64 bytes, unknown chats, a group upgraded to a
supergroup. Faults (429 with retry_after, 403, 5xx) can be queued.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import io
import itertools
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from PIL import Image

ALLOWED_TAGS = {
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "span",
    "tg-spoiler",
    "a",
    "code",
    "pre",
    "blockquote",
    "tg-emoji",
}
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:=\"[^\"<>]*\")?)*)\s*>")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);")


class HTMLError(ValueError):
    pass


def parse_html(text: str) -> str:
    """Visible text of Telegram HTML, or HTMLError the way Telegram would refuse it."""
    out: list[str] = []
    stack: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "<":
            m = _TAG.match(text, i)
            if not m:
                raise HTMLError(f"Unsupported start tag at byte offset {i}")
            closing, name = m.group(1) == "/", m.group(2).lower()
            if name not in ALLOWED_TAGS:
                raise HTMLError(f'Unsupported start tag "{name}" at byte offset {i}')
            if closing:
                if not stack or stack[-1] != name:
                    raise HTMLError(
                        f'Unmatched end tag at byte offset {i}, expected "</{stack[-1] if stack else ""}>", found "</{name}>"'
                    )
                stack.pop()
            else:
                stack.append(name)
            i = m.end()
        elif ch == "&":
            m = _ENTITY.match(text, i)
            if not m:
                raise HTMLError(f"Character entity expected at byte offset {i}")
            out.append({"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"'}.get(m.group(0), "?"))
            i = m.end()
        elif ch == ">":
            raise HTMLError(f"Unexpected > at byte offset {i}")
        else:
            out.append(ch)
            i += 1
    if stack:
        raise HTMLError(f'Can\'t find end tag corresponding to start tag "{stack[-1]}"')
    return "".join(out)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


DROP = 0  # a Fault with this code drops the connection (a network error, not an HTTP one)
# How long a test waits for something the bot should send: a budget only, never a measurement,
# so it is generous; a slow or loaded machine makes a test slower, not red.
WAIT = float(os.environ.get("E2E_WAIT", "300"))


@dataclass
class Fault:
    method: str
    code: int
    description: str
    retry_after: int | None = None
    # Only a request whose text contains this (e.g. one round message among many) meets the fault.
    text_contains: str | None = None


@dataclass
class Chat:
    id: int
    type: str = "private"
    title: str | None = None
    blocked: bool = False
    # Groups: user id -> status ("creator", "administrator", "member"); the bot's own membership;
    # whether the group allows the bot to set reactions.
    members: dict[int, str] = field(default_factory=dict)
    bot_in_chat: bool = True
    reactions_allowed: bool = True
    # A group upgraded to a supergroup: sends here answer 400 with this id in migrate_to_chat_id.
    migrated_to: int | None = None


@dataclass
class FakeTelegram:
    token: str = "123456:TEST-TOKEN"
    bot_id: int = 123456
    bot_username: str = "mock_interview_bot"
    updates: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    messages: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    chats: dict[int, Chat] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    commands: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Telegram's global flood limit, enforced on sendMessage over a sliding second when set:
    # one message over it gets 429 with retry_after=1 (recorded as "sendMessage:429").
    global_rate: int | None = None
    reactions: dict[tuple[int, int], list[dict[str, Any]]] = field(default_factory=dict)
    polls: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Every getUpdates call's offset, and every update id handed out (again after a restart).
    poll_offsets: list[int] = field(default_factory=list)
    handed_out: list[int] = field(default_factory=list)
    # Webhook mode: what setWebhook set, and every post made (update id, HTTP status; 0: refused)
    webhook: dict[str, Any] | None = None
    webhook_posts: list[tuple[int, int]] = field(default_factory=list)
    # A load balancer in front of replicas: updates are posted to these in turn instead.
    webhook_targets: list[str] = field(default_factory=list)

    def __repr__(self) -> str:  # what a failed wait needs to see, not every message
        fetched = self._fetched_offset
        waiting = sum(1 for u in self.updates if u["update_id"] >= fetched)
        last = [m for m, _ in self.requests[-8:]]
        return (
            f"FakeTelegram({len(self.requests)} requests, last {last}; {waiting} updates not yet "
            f"confirmed by getUpdates; last getUpdates {time.monotonic() - self._polled:.1f} s ago)"
        )

    def __post_init__(self) -> None:
        self._sent_times: collections.deque[float] = collections.deque()
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._new_update = asyncio.Event()
        self._sent = asyncio.Condition()
        self.runner: web.AppRunner | None = None
        self.port = 0
        self._fetched_offset = 0
        self._polled = time.monotonic()
        self._pusher: asyncio.Task[None] | None = None
        self._webhook_tries: dict[int, int] = {}

    # --- server lifecycle ---------------------------------------------------------------------

    async def start(self, port: int = 0) -> str:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.url

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        self.webhook = None
        if self._pusher is not None:
            self._pusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pusher
        if self.runner is not None:
            await self.runner.cleanup()

    # --- what tests do as users ---------------------------------------------------------------

    def user(
        self, user_id: int, language_code: str = "en", first_name: str = "Ann"
    ) -> dict[str, Any]:
        self.chats.setdefault(user_id, Chat(user_id))
        return {
            "id": user_id,
            "is_bot": False,
            "first_name": first_name,
            "language_code": language_code,
        }

    def _push(self, update: dict[str, Any]) -> dict[str, Any]:
        update["update_id"] = next(self._update_ids)
        self.updates.append(update)
        self._new_update.set()
        return update

    def _message(
        self, user: dict[str, Any], chat_id: int | None = None, **content: Any
    ) -> dict[str, Any]:
        chat = self.chats[chat_id or user["id"]]
        chat_obj = {"id": chat.id, "type": chat.type}
        if chat.type == "private":
            chat_obj["first_name"] = user["first_name"]
        else:
            chat_obj["title"] = chat.title or "group"
        message = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat_obj,
            "from": user,
            **content,
        }
        self.messages[(chat.id, message["message_id"])] = message
        return message

    @staticmethod
    def _text(text: str) -> dict[str, Any]:
        """A text message's content; a leading /command gets its entity, as Telegram adds it."""
        content: dict[str, Any] = {"text": text}
        if text.startswith("/"):
            command = text.split()[0]
            content["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        return content

    def _quoted(self, chat_id: int, message_id: int) -> dict[str, Any]:
        """The replied-to message as Telegram embeds it (without the fake's own `html`)."""
        return {k: v for k, v in self.messages[(chat_id, message_id)].items() if k != "html"}

    def send_text(
        self,
        user: dict[str, Any],
        text: str,
        reply_to: int | None = None,
        chat_id: int | None = None,
    ) -> dict[str, Any]:
        content = self._text(text)
        if reply_to is not None:
            content["reply_to_message"] = self._quoted(chat_id or user["id"], reply_to)
        message = self._message(user, chat_id, **content)
        self._push({"message": message})
        return message

    def send_sticker(self, user: dict[str, Any]) -> dict[str, Any]:
        message = self._message(
            user,
            sticker={
                "file_id": "CAACAgIAAxkBAAE",
                "file_unique_id": "AgAD",
                "type": "regular",
                "width": 512,
                "height": 512,
                "is_animated": False,
                "is_video": False,
                "emoji": "😀",
            },
        )
        self._push({"message": message})
        return message

    def send_photo(self, user: dict[str, Any]) -> dict[str, Any]:
        message = self._message(
            user,
            photo=[{"file_id": "AgACAgIAAxk", "file_unique_id": "AQAD", "width": 90, "height": 90}],
        )
        self._push({"message": message})
        return message

    def send_voice(self, user: dict[str, Any]) -> dict[str, Any]:
        message = self._message(
            user, voice={"file_id": "AwACAgIAAxk", "file_unique_id": "AgAD", "duration": 3}
        )
        self._push({"message": message})
        return message

    def edit_text(self, user: dict[str, Any], message: dict[str, Any], text: str) -> None:
        edited = {**message, "text": text, "edit_date": int(time.time())}
        self._push({"edited_message": edited})

    def press(self, user: dict[str, Any], message: dict[str, Any], data: str) -> dict[str, Any]:
        update = {
            "callback_query": {
                "id": str(next(self._update_ids) * 7919),
                "from": user,
                "chat_instance": "ci",
                "message": message,
                "data": data,
            }
        }
        return self._push(update)

    # --- groups, as their members use them --------------------------------------------------

    def group(
        self,
        chat_id: int,
        title: str = "ML study group",
        members: dict[int, str] | None = None,
        kind: str = "supergroup",
    ) -> Chat:
        """A group chat (ids are negative, as in Telegram) with members and their statuses."""
        chat = Chat(chat_id, type=kind, title=title, members=dict(members or {}))
        self.chats[chat_id] = chat
        return chat

    def send_in_group(
        self,
        user: dict[str, Any],
        chat_id: int,
        text: str | None = None,
        reply_to: int | None = None,
        **content: Any,
    ) -> dict[str, Any]:
        """A member's message in a group: text (commands get their entity) or other content."""
        if text is not None:
            content.update(self._text(text))
        if reply_to is not None:
            content["reply_to_message"] = self._quoted(chat_id, reply_to)
        self.chats[chat_id].members.setdefault(user["id"], "member")
        message = self._message(user, chat_id, **content)
        self._push({"message": message})
        return message

    def sticker_in_group(
        self, user: dict[str, Any], chat_id: int, reply_to: int | None = None
    ) -> dict[str, Any]:
        sticker = {
            "file_id": "CAACAgIAAxkBAAE",
            "file_unique_id": "AgAD",
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
            "emoji": "😀",
        }
        return self.send_in_group(user, chat_id, reply_to=reply_to, sticker=sticker)

    def _member(self, chat: Chat, user: dict[str, Any], status: str) -> dict[str, Any]:
        member: dict[str, Any] = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(
                {
                    key: key != "is_anonymous"
                    for key in (
                        "can_be_edited",
                        "is_anonymous",
                        "can_manage_chat",
                        "can_delete_messages",
                        "can_manage_video_chats",
                        "can_restrict_members",
                        "can_promote_members",
                        "can_change_info",
                        "can_invite_users",
                        "can_post_stories",
                        "can_edit_stories",
                        "can_delete_stories",
                        "can_send_welcome_messages",
                    )
                }
            )
        elif status == "kicked":
            member["until_date"] = 0
        return member

    def _bot_membership(self, user: dict[str, Any], chat_id: int, old: str, new: str) -> None:
        chat = self.chats[chat_id]
        chat.bot_in_chat = new not in ("left", "kicked")
        bot = self._bot_user()
        self._push(
            {
                "my_chat_member": {
                    "chat": {"id": chat.id, "type": chat.type, "title": chat.title or "group"},
                    "from": user,
                    "date": int(time.time()),
                    "old_chat_member": self._member(chat, bot, old),
                    "new_chat_member": self._member(chat, bot, new),
                }
            }
        )

    def add_bot(self, user: dict[str, Any], chat_id: int) -> None:
        """`user` adds the bot to the group: a my_chat_member update left -> member."""
        self._bot_membership(user, chat_id, "left", "member")

    def remove_bot(self, user: dict[str, Any], chat_id: int) -> None:
        """`user` removes the bot: member -> kicked; sending there now answers 403."""
        self._bot_membership(user, chat_id, "member", "kicked")

    def upgrade_group(self, user: dict[str, Any], chat_id: int, new_id: int) -> Chat:
        """`user` upgrades the group to a supergroup, as Telegram does it: a new chat id with
        the same members, a service message in each chat, and from now on every send to the old
        id answers 400 with migrate_to_chat_id."""
        old = self.chats[chat_id]
        new = self.group(new_id, old.title or "group", old.members, kind="supergroup")
        old.migrated_to = new_id
        self._push({"message": self._message(user, chat_id, migrate_to_chat_id=new_id)})
        self._push({"message": self._message(user, new_id, migrate_from_chat_id=chat_id)})
        return new

    def answer_poll(self, user: dict[str, Any], poll_id: str, option_ids: list[int]) -> None:
        """A poll_answer update, as Telegram sends for non-anonymous polls."""
        poll = self.polls[poll_id]
        self._push(
            {
                "poll_answer": {
                    "poll_id": poll_id,
                    "user": user,
                    "option_ids": option_ids,
                    "option_persistent_ids": [str(i) for i in option_ids],
                }
            }
        )
        for index in option_ids:
            poll["options"][index]["voter_count"] += 1

    def block_bot(self, user: dict[str, Any]) -> dict[str, Any]:
        """The user blocks the bot: sends fail with 403 and a my_chat_member update arrives."""
        chat = self.chats.setdefault(user["id"], Chat(user["id"]))
        chat.blocked = True
        bot_member = {"user": self._bot_user()}
        return self._push(
            {
                "my_chat_member": {
                    "chat": {"id": chat.id, "type": "private", "first_name": user["first_name"]},
                    "from": user,
                    "date": int(time.time()),
                    "old_chat_member": {**bot_member, "status": "member"},
                    "new_chat_member": {**bot_member, "status": "kicked", "until_date": 0},
                }
            }
        )

    # --- what tests read ----------------------------------------------------------------------

    def sent(self, chat_id: int | None = None, method: str = "sendMessage") -> list[dict[str, Any]]:
        return [
            p
            for m, p in self.requests
            if m == method and (chat_id is None or int(p.get("chat_id", 0)) == chat_id)
        ]

    def bot_messages(self, chat_id: int) -> list[dict[str, Any]]:
        return [
            m
            for (c, _), m in sorted(self.messages.items())
            if c == chat_id and m["from"]["id"] == self.bot_id
        ]

    async def wait_for(self, predicate: Any, timeout: float = WAIT) -> Any:
        """Wait until predicate(self) returns something truthy; return it (checked after every
        request the bot makes)."""
        deadline = time.monotonic() + timeout
        async with self._sent:
            while True:
                result = predicate(self)
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"the bot did not send what the test waited for: {self}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._sent.wait(), remaining)

    async def wait_messages(
        self, chat_id: int, count: int, timeout: float = WAIT
    ) -> list[dict[str, Any]]:
        return await self.wait_for(
            lambda s: (lambda ms: ms if len(ms) >= count else None)(s.bot_messages(chat_id)),
            timeout,
        )

    # --- HTTP handling ------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return self._error(401, "Unauthorized")
        method = request.match_info["method"]
        params = await self._params(request)
        for fault in list(self.faults):
            if fault.method.lower() == method.lower() and (
                fault.text_contains is None or fault.text_contains in str(params.get("text", ""))
            ):
                self.faults.remove(fault)
                self.requests.append((method + ":fault", params))
                if fault.code == DROP:  # the connection dies before any answer is written
                    assert request.transport is not None
                    request.transport.abort()
                    return web.Response()
                extra = {"retry_after": fault.retry_after} if fault.retry_after else None
                return self._error(fault.code, fault.description, extra)
        handler = getattr(self, "_m_" + method.lower(), None)
        if handler is None:
            return self._error(404, "Not Found: method not found")
        if method == "sendMessage" and self.global_rate:
            now = time.monotonic()
            while self._sent_times and self._sent_times[0] <= now - 1.0:
                self._sent_times.popleft()
            if len(self._sent_times) >= self.global_rate:
                self.requests.append((method + ":429", params))
                return self._error(429, "Too Many Requests: retry after 1", {"retry_after": 1})
            self._sent_times.append(now)
        if method != "getUpdates":
            self.requests.append((method, params))
        try:
            result = await handler(params)
        except _ApiError as exc:
            return self._error(exc.code, exc.description, exc.parameters)
        async with self._sent:
            self._sent.notify_all()
        return web.json_response({"ok": True, "result": result})

    @staticmethod
    async def _params(request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            return await request.json()
        data = await request.post()
        params: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, str) and value[:1] in "[{":
                try:
                    params[key] = json.loads(value)
                    continue
                except json.JSONDecodeError:
                    pass
            params[key] = value
        return params

    @staticmethod
    def _error(
        code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> web.Response:
        body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        return web.json_response(body, status=code)

    def _bot_user(self) -> dict[str, Any]:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": "Mock Interview",
            "username": self.bot_username,
        }

    def _chat(self, chat_id: Any) -> Chat:
        try:
            chat = self.chats[int(chat_id)]
        except (KeyError, ValueError, TypeError):
            raise _ApiError(400, "Bad Request: chat not found") from None
        if chat.blocked:
            raise _ApiError(403, "Forbidden: bot was blocked by the user")
        if chat.type != "private" and not chat.bot_in_chat:
            raise _ApiError(403, f"Forbidden: bot was kicked from the {chat.type} chat")
        if chat.migrated_to is not None:
            raise _ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to},
            )
        return chat

    def _check_text(self, params: dict[str, Any], key: str = "text") -> str:
        text = str(params.get(key, ""))
        if params.get("parse_mode") == "HTML":
            try:
                visible = parse_html(text)
            except HTMLError as exc:
                raise _ApiError(400, f"Bad Request: can't parse entities: {exc}") from None
        else:
            visible = text
        if not visible.strip():
            raise _ApiError(400, "Bad Request: message text is empty")
        if utf16_len(visible) > 4096:
            raise _ApiError(400, "Bad Request: message is too long")
        return visible

    @staticmethod
    def _check_markup(params: dict[str, Any]) -> None:
        markup = params.get("reply_markup") or {}
        for row in markup.get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode()) <= 64:
                    raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
                if not button.get("text"):
                    raise _ApiError(
                        400, "Bad Request: text buttons are unallowed in the inline keyboard"
                    )

    async def _m_getme(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            **self._bot_user(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _m_deletewebhook(self, params: dict[str, Any]) -> bool:
        self.webhook = None
        return True

    async def _m_setwebhook(self, params: dict[str, Any]) -> bool:
        """Like Telegram: from now on updates are posted to the URL (with the secret in the
        header), in order, each retried until the bot answers 2xx; getUpdates gets 409."""
        url, secret = str(params.get("url") or ""), params.get("secret_token")
        if not url.startswith(("http://", "https://")):
            raise _ApiError(400, "Bad Request: bad webhook: invalid URL")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
            raise _ApiError(400, "Bad Request: secret token contains unallowed characters")
        self.webhook = {"url": url, "secret_token": secret, **params}
        if self._pusher is None or self._pusher.done():
            self._pusher = asyncio.create_task(self._push_to_webhook())
        return True

    async def _push_to_webhook(self) -> None:
        import aiohttp  # the client side of the same library the server runs on

        async with aiohttp.ClientSession() as client:
            while self.webhook is not None:
                allowed = self.webhook.get("allowed_updates")
                ready = [u for u in self.updates if not allowed or any(k in u for k in allowed)]
                if not ready:
                    self._new_update.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._new_update.wait(), 0.2)
                    continue
                update, hook = ready[0], self.webhook
                targets = self.webhook_targets or [hook["url"]]
                # A load balancer sends a failed post to the next replica (a dead one is skipped).
                tries = self._webhook_tries.get(update["update_id"], 0)
                url = targets[(update["update_id"] + tries) % len(targets)]
                headers = {}
                if hook.get("secret_token"):
                    headers["X-Telegram-Bot-Api-Secret-Token"] = hook["secret_token"]
                try:
                    async with client.post(url, json=update, headers=headers) as reply:
                        status = reply.status
                except (aiohttp.ClientError, OSError):
                    status = 0  # not listening (yet, or any more): Telegram retries
                self.webhook_posts.append((update["update_id"], status))
                if 200 <= status < 300:
                    self.handed_out.append(update["update_id"])
                    self.updates.remove(update)
                else:
                    self._webhook_tries[update["update_id"]] = tries + 1
                    await asyncio.sleep(0.05)

    async def _m_close(self, params: dict[str, Any]) -> bool:
        return True

    async def _m_getupdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise _ApiError(
                409, "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )  # fmt: skip
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        self.poll_offsets.append(offset)  # what each getUpdates confirmed (0: nothing)
        self._fetched_offset, self._polled = offset, time.monotonic()
        if offset:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        allowed = params.get("allowed_updates")
        deadline = time.monotonic() + timeout
        while True:
            ready = [u for u in self.updates if not allowed or any(k in u for k in allowed)]
            if ready or time.monotonic() >= deadline:
                batch = ready[: int(params.get("limit") or 100)]
                self.handed_out.extend(u["update_id"] for u in batch)
                return batch
            self._new_update.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_update.wait(), deadline - time.monotonic())

    async def _m_sendmessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        visible = self._check_text(params)
        self._check_markup(params)
        message = self._bot_message(chat, text=visible, html=params.get("text"))
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        reply = (params.get("reply_parameters") or {}).get("message_id")
        if reply is not None:
            message["reply_to_message_id"] = reply
        self.messages[(chat.id, message["message_id"])] = message
        return {k: v for k, v in message.items() if k not in ("html", "reply_to_message_id")}

    def _upload(self, params: dict[str, Any], field: str) -> tuple[str, bytes]:
        """A file uploaded as multipart form data: (file name, bytes). Its bytes are kept in
        the request's params (`sent(chat, method)[i][field]["content"]`)."""
        upload = params.get(field)
        if isinstance(upload, str) and upload.startswith("attach://"):
            # Files travel as parts of their own, named by an attach:// reference.
            upload = params.get(upload.removeprefix("attach://"))
        if isinstance(upload, str) or upload is None:
            raise _ApiError(400, f"Bad Request: there is no {field} in the request")
        content = upload.file.read()
        if not content:
            raise _ApiError(400, "Bad Request: file must be non-empty")
        params[field] = {"file_name": upload.filename, "content": content}
        return upload.filename, content

    def _caption(self, params: dict[str, Any]) -> str:
        caption = self._check_text(params, "caption") if params.get("caption") else ""
        if utf16_len(caption) > 1024:
            raise _ApiError(400, "Bad Request: message caption is too long")
        return caption

    def _media_message(
        self, chat: Any, params: dict[str, Any], caption: str, **media: Any
    ) -> dict[str, Any]:
        self._check_markup(params)
        # text and html: what bot_messages() readers look at
        message = self._bot_message(
            chat, caption=caption, text=caption, html=params.get("caption") or "", **media
        )
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        self.messages[(chat.id, message["message_id"])] = message
        return {k: v for k, v in message.items() if k not in ("text", "html")}

    async def _m_senddocument(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        name, content = self._upload(params, "document")
        document = {
            "file_id": f"doc{len(self.messages)}",
            "file_unique_id": f"u{len(self.messages)}",
            "file_name": name,
            "file_size": len(content),
        }
        return self._media_message(chat, params, self._caption(params), document=document)

    async def _m_sendphoto(self, params: dict[str, Any]) -> dict[str, Any]:
        """Like Telegram, only an image it can decode is accepted (PIL reads the bytes)."""
        chat = self._chat(params.get("chat_id"))
        _, content = self._upload(params, "photo")
        try:
            with Image.open(io.BytesIO(content)) as image:
                width, height = image.size
        except (OSError, ValueError):
            raise _ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED") from None
        photo = [
            {
                "file_id": f"photo{len(self.messages)}",
                "file_unique_id": f"p{len(self.messages)}",
                "width": width,
                "height": height,
                "file_size": len(content),
            }
        ]
        return self._media_message(chat, params, self._caption(params), photo=photo)

    def _bot_message(self, chat: Chat, **content: Any) -> dict[str, Any]:
        """A message the bot sends: a new id, now, the chat and the bot as sender."""
        return {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat.id, "type": chat.type},
            "from": self._bot_user(),
            **content,
        }

    async def _m_editmessagetext(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        key = (chat.id, int(params.get("message_id", 0)))
        if key not in self.messages:
            raise _ApiError(400, "Bad Request: message to edit not found")
        visible = self._check_text(params)
        self._check_markup(params)
        self.messages[key].update(text=visible, html=params.get("text"))
        return {k: v for k, v in self.messages[key].items() if k != "html"}

    async def _m_answercallbackquery(self, params: dict[str, Any]) -> bool:
        if len(str(params.get("text", ""))) > 200:
            raise _ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        return True

    async def _m_sendchataction(self, params: dict[str, Any]) -> bool:
        self._chat(params.get("chat_id"))
        return True

    async def _m_setmycommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands") or []
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command.get("command", "")):
                raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise _ApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        # Keyed "<language>" for the default scope and "<scope type>:<language>" otherwise.
        scope = (params.get("scope") or {}).get("type", "default")
        lang = params.get("language_code") or ""
        valid_scopes = {
            "default",
            "all_private_chats",
            "all_group_chats",
            "all_chat_administrators",
        }
        if scope not in valid_scopes:
            raise _ApiError(400, "Bad Request: BOT_COMMAND_SCOPE_INVALID")
        self.commands[lang if scope == "default" else f"{scope}:{lang}"] = commands
        return True

    # --- groups: members, reactions, polls ----------------------------------------------------

    def _group(self, params: dict[str, Any]) -> Chat:
        chat = self._chat(params.get("chat_id"))
        if chat.type == "private":
            raise _ApiError(400, "Bad Request: method is available only for supergroups")
        return chat

    async def _m_getchatmember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        user_id = int(params.get("user_id", 0))
        status = chat.members.get(user_id, "left")
        user = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
        if chat.type == "private" and user_id == chat.id:
            status = "member"
        return self._member(chat, user, status)

    async def _m_getchatadministrators(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        chat = self._group(params)
        return [
            self._member(chat, {"id": uid, "is_bot": False, "first_name": f"user{uid}"}, status)
            for uid, status in chat.members.items()
            if status in ("creator", "administrator")
        ]

    async def _m_setmessagereaction(self, params: dict[str, Any]) -> bool:
        chat = self._chat(params.get("chat_id"))
        key = (chat.id, int(params.get("message_id", 0)))
        if key not in self.messages:
            raise _ApiError(400, "Bad Request: message to react not found")
        if not chat.reactions_allowed:
            raise _ApiError(400, "Bad Request: REACTION_INVALID")
        self.reactions[key] = list(params.get("reaction") or [])
        return True

    async def _m_editmessagereplymarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        key = (chat.id, int(params.get("message_id", 0)))
        if key not in self.messages:
            raise _ApiError(400, "Bad Request: message to edit not found")
        self._check_markup(params)
        message = self.messages[key]
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        else:
            message.pop("reply_markup", None)
        return {k: v for k, v in message.items() if k != "html"}

    async def _m_sendpoll(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        question = str(params.get("question", ""))
        options = params.get("options") or []
        if not 1 <= len(question) <= 300:
            raise _ApiError(400, "Bad Request: poll question length must be 1-300")
        if not 2 <= len(options) <= 12:
            raise _ApiError(400, "Bad Request: poll must have 2-12 options")
        texts = [self._option_text(o) for o in options]
        if any(not 1 <= len(text) <= 100 for text in texts):
            raise _ApiError(400, "Bad Request: poll options length must be 1-100")
        quiz = params.get("type") == "quiz"
        correct = params.get("correct_option_id")
        if quiz and (correct is None or not 0 <= int(correct) < len(texts)):
            raise _ApiError(400, "Bad Request: wrong correct option id")
        if len(str(params.get("explanation") or "")) > 200:
            raise _ApiError(400, "Bad Request: explanation is too long")
        poll_id = str(5_000_000 + len(self.polls))
        poll = {
            "id": poll_id,
            "question": question,
            "options": [
                {"persistent_id": str(i), "text": text, "voter_count": 0}
                for i, text in enumerate(texts)
            ],
            "total_voter_count": 0,
            "is_closed": False,
            "is_anonymous": params.get("is_anonymous", True) not in (False, "false", "False"),
            "type": "quiz" if quiz else "regular",
            "allows_multiple_answers": False,
            "allows_revoting": False,
            "members_only": False,
        }
        if quiz:
            poll["correct_option_id"] = int(correct)
            if params.get("explanation"):
                poll["explanation"] = params["explanation"]
        self.polls[poll_id] = poll
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat.id, "type": chat.type},
            "from": self._bot_user(),
            "poll": poll,
            "text": question,
        }
        if params.get("reply_markup"):
            self._check_markup(params)
            message["reply_markup"] = params["reply_markup"]
        self.messages[(chat.id, message["message_id"])] = message
        return {k: v for k, v in message.items() if k != "text"}

    @staticmethod
    def _option_text(option: Any) -> str:
        """A poll option's visible text. Its text_parse_mode arrives as the bot's default parse
        mode unless the bot set it (aiogram fills the default in, as for a message's
        parse_mode), and Telegram refuses malformed HTML in an option as in a message."""
        if not isinstance(option, dict):
            return str(option)
        text = str(option.get("text", ""))
        if option.get("text_parse_mode") == "HTML":
            try:
                return parse_html(text)
            except HTMLError as exc:
                raise _ApiError(400, f"Bad Request: can't parse entities: {exc}") from None
        return text

    async def _m_stoppoll(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params.get("chat_id"))
        message = self.messages.get((chat.id, int(params.get("message_id", 0))))
        if message is None or "poll" not in message:
            raise _ApiError(400, "Bad Request: message with poll to stop not found")
        if message["poll"]["is_closed"]:
            raise _ApiError(400, "Bad Request: poll has already been closed")
        message["poll"]["is_closed"] = True
        message.pop("reply_markup", None)
        return message["poll"]


class _ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters
