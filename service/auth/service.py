"""Creating, checking and revoking API tokens; roles and what each may do."""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.auth.models import ApiToken
from service.database import utcnow
from service.errors import InvalidInput, NotFoundError

TOKEN_PREFIX = "dgt_"


class Role(enum.IntEnum):
    READER = 1
    EDITOR = 2
    ADMIN = 3

    @classmethod
    def parse(cls, name: str) -> Role:
        try:
            return cls[name.upper()]
        except KeyError:
            choices = ", ".join(r.name.lower() for r in cls)
            raise InvalidInput(f"role: {name!r} is not one of {choices}") from None


@dataclass(frozen=True)
class Caller:
    token_id: int
    name: str
    role: Role


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(session: Session, name: str, role: Role) -> tuple[ApiToken, str]:
    """A new token; the plain token is returned here and never again."""
    name = name.strip()
    if not name or len(name) > 200:
        raise InvalidInput("name: give a token name of 1 to 200 characters")
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        name=name, role=role.name.lower(), token_hash=hash_token(plain), prefix=plain[:12]
    )
    session.add(token)
    session.flush()
    return token, plain


def authenticate(session: Session, plain: str) -> Caller | None:
    """The caller a bearer token belongs to, or None for an unknown or revoked token."""
    if not plain.startswith(TOKEN_PREFIX) or len(plain) > 200:
        return None
    digest = hash_token(plain)
    token = session.scalar(select(ApiToken).where(ApiToken.token_hash == digest))
    if token is None or token.revoked_at is not None:
        return None
    if not hmac.compare_digest(token.token_hash, digest):
        return None
    token.last_used_at = utcnow()
    return Caller(token_id=token.id, name=token.name, role=Role.parse(token.role))


def list_all(session: Session) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).order_by(ApiToken.id)))


def revoke(session: Session, token_id: int) -> ApiToken:
    token = session.get(ApiToken, token_id)
    if token is None:
        raise NotFoundError(f"token {token_id} does not exist")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
    return token
