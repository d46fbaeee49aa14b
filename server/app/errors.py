"""Errors of the match runtime. The rpc layer maps each ``code`` to a gRPC status.

Engine errors (illegal moves and the like) pass through unchanged; these are the errors of
the service around the rules: identity, versions, request ids, limits.
"""

from __future__ import annotations


class AppError(Exception):
    """A request the runtime refuses, with a stable ``rule`` id and a message for people."""

    code = "internal"
    default_rule = "error"

    def __init__(
        self, message: str, rule: str | None = None, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule or self.default_rule
        self.metadata = dict(metadata or {})
        """Machine-readable facts for the client (the ErrorInfo metadata), e.g. the
        current version of an ABORTED submit."""


class BadRequest(AppError):
    """A missing or malformed field."""

    code = "invalid_argument"
    default_rule = "bad_request"


class MatchNotFound(AppError):
    """No match has this id."""

    code = "not_found"
    default_rule = "no_such_match"


class Refused(AppError):
    """The request is well formed but the match is not in a state that allows it."""

    code = "failed_precondition"
    default_rule = "refused"


class StaleVersion(AppError):
    """The action was chosen from a view that is out of date for this seat's decision."""

    code = "aborted"
    default_rule = "stale_version"


class RequestIdReused(AppError):
    """A request id already used by this seat for a different action."""

    code = "already_exists"
    default_rule = "request_id_reused"


class Unauthenticated(AppError):
    """No token, or a token the server does not know."""

    code = "unauthenticated"
    default_rule = "unauthenticated"


class PermissionDenied(AppError):
    """A valid token used for a match it does not belong to."""

    code = "permission_denied"
    default_rule = "wrong_match"


class LimitExceeded(AppError):
    """Over one of the server's limits."""

    code = "resource_exhausted"
    default_rule = "limit"
