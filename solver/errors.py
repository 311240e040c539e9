"""Errors of sowsolve: each subclasses the built-in a caller would expect."""


class BadParameters(ValueError):
    """A game, board size or option that sowsolve cannot use."""


class BadPosition(ValueError):
    """Position text that does not describe a position of the board at hand."""


class BadMove(ValueError):
    """Move text that names no legal move of the position."""
