"""What goes on the wire per subscription format, and the signatures each scheme needs.

- standard: the JSON event, headers ``webhook-id``, ``webhook-timestamp`` and
  ``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`` keyed with the
  base64-decoded part of the ``whsec_`` secret (Standard Webhooks 1.0).
- slack: ``{"text", "blocks": [section mrkdwn]}``; ``&``, ``<``, ``>`` escaped as entities.
- discord: ``{"content", "allowed_mentions": {"parse": []}}``; markdown escaped, no pings.
- feishu (Lark): ``{"msg_type": "post", "content": {"post": {"zh_cn": {title, content}}}}``
  of ``text``/``a`` tags, which carry no markup; signing adds ``timestamp`` (seconds) and
  ``sign`` = base64(HMAC-SHA256, key ``"{timestamp}\\n{secret}"``, empty message) to the body.
- dingtalk: ``{"msgtype": "markdown", "markdown": {title, text}}``; signing adds the query
  parameters ``timestamp`` (milliseconds) and ``sign`` = urlencode(base64(HMAC-SHA256, key
  secret, message ``"{timestamp}\\n{secret}"``)).
- wecom: ``{"msgtype": "markdown", "markdown": {"content"}}`` (at most 4096 bytes).

Chat text never contains raw HTML: payload text is already plain (tags stripped), and each
format escapes its own markup characters.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from service.events.models import EventType
from service.webhooks.models import MessageFormat

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
MIN_SECRET_BYTES = 24
MAX_SECRET_BYTES = 64
MAX_CHAT_LINES = 40
MAX_ITEMS_PER_THEME = 5


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_`` secret; ValueError when it is not one."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a signing secret starts with {SECRET_PREFIX!r}")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except ValueError as exc:
        raise ValueError("a signing secret is base64 after its prefix") from exc
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(
            f"a signing secret holds {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} random bytes"
        )
    return key


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def feishu_sign(secret: str, timestamp_seconds: int) -> str:
    key = f"{timestamp_seconds}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(secret: str, timestamp_ms: int) -> str:
    """The base64 signature; it is URL-encoded once as a query parameter."""
    message = f"{timestamp_ms}\n{secret}".encode()
    return base64.b64encode(hmac.new(secret.encode(), message, hashlib.sha256).digest()).decode()


@dataclass
class OutgoingRequest:
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class ChatMessage:
    title: str
    url: str | None
    lines: list[str]


def chat_message(payload: dict[str, Any]) -> ChatMessage:
    """A neutral summary of an event, rendered by each chat format with its own escaping."""
    kind = payload.get("type")
    data: dict[str, Any] = payload.get("data") or {}
    project = data.get("project") or data.get("repo") or ""
    lines: list[str] = []
    if kind in (EventType.RELEASE_PRERELEASE, EventType.RELEASE_STABLE):
        label = "pre-release" if kind == EventType.RELEASE_PRERELEASE else "release"
        title = f"{project} {data.get('tag')} ({label})"
    elif kind == EventType.CHANGE_BREAKING:
        if data.get("source") == "pull_request":
            title = f"Breaking change in {project}: #{data.get('number')} {data.get('title')}"
        else:
            title = f"Breaking changes in {project} {data.get('tag')}"
    elif kind == EventType.DIGEST_PUBLISHED:
        title = f"Digest published: {data.get('title')}"
        if data.get("summary"):
            lines.append(str(data["summary"]))
    else:
        title = str(data.get("message") or "Webhook test from the AI infrastructure digest")
    breaking = data.get("breaking_changes") or []
    if breaking and not (
        kind == EventType.CHANGE_BREAKING and data.get("source") == "pull_request"
    ):
        lines.append("Upgrade checks:")
        lines.extend(f"• {line}" for line in breaking[:10])
    for theme in data.get("themes") or []:
        items = theme.get("items") or []
        lines.append(f"{theme.get('title')} ({theme.get('count', len(items))}):")
        lines.extend(
            f"• #{item.get('number')} {item.get('title')}" for item in items[:MAX_ITEMS_PER_THEME]
        )
    if len(lines) > MAX_CHAT_LINES:
        lines = [*lines[: MAX_CHAT_LINES - 1], f"… {len(lines) - MAX_CHAT_LINES + 1} more"]
    return ChatMessage(title=title, url=data.get("url"), lines=lines)


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_DISCORD_MARKUP = re.compile(r"([\\*_~`|>#\[\]()<:@-])")
_MARKDOWN_MARKUP = re.compile(r"([\\*_~`|#\[\]()!])")


def discord_escape(text: str) -> str:
    return _DISCORD_MARKUP.sub(r"\\\1", text)


def markdown_escape(text: str) -> str:
    """For DingTalk and WeCom markdown: markdown characters escaped, and angle brackets
    (their HTML-ish ``<font>`` / ``<@user>`` markup) replaced by look-alikes."""
    return _MARKDOWN_MARKUP.sub(r"\\\1", text).replace("<", "＜").replace(">", "＞")


def _truncate_bytes(text: str, limit: int) -> str:
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode(errors="ignore") + "…"


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def render(
    message_format: str,
    payload: dict[str, Any],
    *,
    secret: str,
    signing: bool,
    message_id: str,
    timestamp: int,
) -> OutgoingRequest:
    """The request body, headers and query parameters of one attempt."""
    headers = {"content-type": "application/json; charset=utf-8"}
    if message_format == MessageFormat.STANDARD:
        body = _json(payload)
        headers.update(
            {
                "webhook-id": message_id,
                "webhook-timestamp": str(timestamp),
                "webhook-signature": standard_signature(secret, message_id, timestamp, body),
            }
        )
        return OutgoingRequest(body, headers)
    message = chat_message(payload)
    if message_format == MessageFormat.SLACK:
        text = f"*{slack_escape(message.title)}*"
        if message.url:
            text += f"\n<{slack_escape(message.url)}>"
        text += "".join(f"\n{slack_escape(line)}" for line in message.lines)
        body_json: dict[str, Any] = {
            "text": slack_escape(message.title),
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}],
        }
    elif message_format == MessageFormat.DISCORD:
        text = f"**{discord_escape(message.title)}**"
        if message.url:
            text += f"\n<{message.url}>"
        text += "".join(f"\n{discord_escape(line)}" for line in message.lines)
        body_json = {"content": text[:2000], "allowed_mentions": {"parse": []}}
    elif message_format == MessageFormat.FEISHU:
        content: list[list[dict[str, str]]] = []
        if message.url:
            content.append([{"tag": "a", "text": message.url, "href": message.url}])
        content.extend([{"tag": "text", "text": line}] for line in message.lines)
        body_json = {
            "msg_type": "post",
            "content": {"post": {"zh_cn": {"title": message.title, "content": content}}},
        }
        if signing:
            seconds = timestamp
            body_json = {
                "timestamp": str(seconds),
                "sign": feishu_sign(secret, seconds),
                **body_json,
            }
    elif message_format in (MessageFormat.DINGTALK, MessageFormat.WECOM):
        text = f"### {markdown_escape(message.title)}"
        if message.url:
            text += f"\n\n[{markdown_escape(message.url)}]({message.url})"
        text += "".join(f"\n\n{markdown_escape(line)}" for line in message.lines)
        if message_format == MessageFormat.WECOM:
            body_json = {
                "msgtype": "markdown",
                "markdown": {"content": _truncate_bytes(text, 4096)},
            }
        else:
            body_json = {
                "msgtype": "markdown",
                "markdown": {"title": message.title[:100], "text": text[:5000]},
            }
            if signing:
                millis = timestamp * 1000
                return OutgoingRequest(
                    _json(body_json),
                    headers,
                    {"timestamp": str(millis), "sign": dingtalk_sign(secret, millis)},
                )
    else:
        raise ValueError(f"unknown webhook format {message_format!r}")
    return OutgoingRequest(_json(body_json), headers)


def chat_error(message_format: str, response_body: bytes) -> str | None:
    """Chinese bots answer HTTP 200 with an error code in the body (bad signature, ...)."""
    if message_format not in (MessageFormat.FEISHU, MessageFormat.DINGTALK, MessageFormat.WECOM):
        return None
    try:
        answer = json.loads(response_body or b"{}")
    except ValueError:
        return None
    if not isinstance(answer, dict):
        return None
    code = answer.get("code", answer.get("errcode", answer.get("StatusCode", 0)))
    if code in (0, None, "0"):
        return None
    text = answer.get("msg") or answer.get("errmsg") or answer.get("StatusMessage") or ""
    return f"the bot answered code {code}: {str(text)[:300]}"
