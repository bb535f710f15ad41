from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from service.api import ERROR_RESPONSES, DbId, SessionDep
from service.auth import service
from service.auth.models import ApiToken

router = APIRouter(prefix="/v1/tokens", tags=["tokens"], responses=ERROR_RESPONSES)


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=200, examples=["alice"])
    role: str = Field(examples=["editor"], description="reader, editor or admin")


class TokenOut(BaseModel):
    id: int
    name: str
    role: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreated(TokenOut):
    token: str = Field(description="the bearer token; shown only in this response")


def token_out(token: ApiToken) -> TokenOut:
    return TokenOut(
        id=token.id,
        name=token.name,
        role=token.role,
        prefix=token.prefix,
        created_at=token.created_at,
        last_used_at=token.last_used_at,
        revoked_at=token.revoked_at,
    )


@router.post("", response_model=TokenCreated, status_code=201)
def create_token(body: TokenIn, session: SessionDep) -> TokenCreated:
    token, plain = service.create(session, body.name, service.Role.parse(body.role))
    session.commit()
    return TokenCreated(**token_out(token).model_dump(), token=plain)


@router.get("", response_model=list[TokenOut])
def list_tokens(session: SessionDep) -> list[TokenOut]:
    return [token_out(t) for t in service.list_all(session)]


@router.delete("/{token_id}", status_code=204)
def revoke_token(token_id: DbId, session: SessionDep) -> Response:
    service.revoke(session, token_id)
    session.commit()
    return Response(status_code=204)
