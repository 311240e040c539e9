"""Errors of sowsolve: each subclasses the built-in a caller would expect."""
from __future__ import annotations

QUOTE_LIMIT = 40


def quote(text, limit: int = QUOTE_LIMIT) -> str:
    """Input quoted for an error message: repr of the text, or of its first `limit` characters
    and its length when it is longer, so that a huge input never turns into a huge message."""
    if not isinstance(text, str):
        text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def shown(value, limit: int = 20) -> str:
    """A value for an error message as it was given (a number, a path): the whole of it, or its
    first `limit` characters and its length when it is longer, never cut without saying so."""
    text = str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


class BadParameters(ValueError):
    """A game, board size or option that sowsolve cannot use."""


class BadPosition(ValueError):
    """Position text that does not describe a position of the board at hand."""


class BadMove(ValueError):
    """Move text that names no legal move of the position."""
