"""Who may call each route. Every route of the app must have a rule here: a route without
one is refused (and fails the table-driven test), so access is never granted by omission."""

from __future__ import annotations

import enum
import logging

from fastapi import Request

from service.auth import service as tokens
from service.errors import Forbidden, Unauthorized

log = logging.getLogger(__name__)


class Access(enum.Enum):
    PUBLIC = "public"  # health checks, API docs
    READ = "read"  # open, or a reader token when DIGEST_READS_NEED_TOKEN is set
    EDITOR = "editor"
    ADMIN = "admin"


READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_P, _R, _E, _A = Access.PUBLIC, Access.READ, Access.EDITOR, Access.ADMIN
# (method, route path) → who may call it. Writes need an editor; subscriptions and tokens
# need an admin; reads are open unless DIGEST_READS_NEED_TOKEN is set.
RULES: dict[tuple[str, str], Access] = {
    ("GET", "/healthz"): _P,
    ("GET", "/readyz"): _P,
    ("GET", "/metrics"): _P,
    ("GET", "/openapi.json"): _P,
    ("GET", "/docs"): _P,
    ("GET", "/docs/oauth2-redirect"): _P,
    ("GET", "/redoc"): _P,
    ("GET", "/desk"): _R,
    ("GET", "/v1/projects"): _R,
    ("POST", "/v1/projects"): _E,
    ("POST", "/v1/projects/import"): _E,
    ("GET", "/v1/feeds"): _R,
    ("GET", "/v1/projects/{owner}/{name}"): _R,
    ("DELETE", "/v1/projects/{owner}/{name}"): _E,
    ("GET", "/v1/projects/{owner}/{name}/sync"): _R,
    ("POST", "/v1/sync"): _E,
    ("GET", "/v1/releases"): _R,
    ("GET", "/v1/releases.atom"): _R,
    ("GET", "/v1/changes"): _R,
    ("GET", "/v1/digests/draft"): _R,
    ("GET", "/v1/digests"): _R,
    ("POST", "/v1/digests"): _E,
    ("GET", "/v1/digests.atom"): _R,
    ("GET", "/v1/digests/{number}"): _R,
    ("GET", "/v1/curation"): _R,
    ("POST", "/v1/curation"): _E,
    ("GET", "/v1/webhooks"): _A,
    ("POST", "/v1/webhooks"): _A,
    ("GET", "/v1/webhooks/{subscription_id}"): _A,
    ("PATCH", "/v1/webhooks/{subscription_id}"): _A,
    ("DELETE", "/v1/webhooks/{subscription_id}"): _A,
    ("GET", "/v1/webhooks/{subscription_id}/deliveries"): _A,
    ("POST", "/v1/webhooks/{subscription_id}/deliveries/{delivery_id}/redeliver"): _A,
    ("POST", "/v1/webhooks/{subscription_id}/test"): _A,
    ("GET", "/v1/tokens"): _A,
    ("POST", "/v1/tokens"): _A,
    ("DELETE", "/v1/tokens/{token_id}"): _A,
}


def rule_for(method: str, path: str) -> Access | None:
    return RULES.get((method.upper(), path))


REQUIRED_ROLE = {
    Access.READ: tokens.Role.READER,
    Access.EDITOR: tokens.Role.EDITOR,
    Access.ADMIN: tokens.Role.ADMIN,
}


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credential = header.partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        return None
    return credential.strip()


def authorize(request: Request) -> None:
    """App-wide dependency: check the caller against the rule of the matched route."""
    route = request.scope.get("route")
    path = getattr(route, "path", request.url.path)
    method = request.method.upper()
    access = rule_for(method, path) or (rule_for("GET", path) if method == "HEAD" else None)
    if access is None:
        log.error("refusing %s %s: the route has no access rule", method, path)
        raise Forbidden(f"{method} {path} has no access rule")
    if access is Access.PUBLIC:
        return
    if access is Access.READ and not request.app.state.settings.reads_need_token:
        return
    plain = bearer_token(request)
    client = request.client.host if request.client else "?"
    if plain is None:
        log.warning("no bearer token for %s %s from %s", method, path, client)
        raise Unauthorized("this route needs an API token: send 'Authorization: Bearer <token>'")
    with request.app.state.session_factory() as session, session.begin():
        caller = tokens.authenticate(session, plain)
    if caller is None:
        # the token itself is never logged
        log.warning("unknown or revoked token for %s %s from %s", method, path, client)
        raise Unauthorized("the API token is unknown or revoked")
    request.state.caller = caller
    needed = REQUIRED_ROLE[access]
    if caller.role < needed:
        log.warning(
            "token %r (%s) may not %s %s", caller.name, caller.role.name.lower(), method, path
        )
        raise Forbidden(
            f"{method} {path} needs the {needed.name.lower()} role; "
            f"token {caller.name!r} is {caller.role.name.lower()}"
        )
