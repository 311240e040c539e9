"""Score tiers with cycles inside them (margin games): the tier worker around cext/scoresolve.pyx.

The game hands over each tier (`ScoreTiers.score_tier`: moves and un-moves generated in its kernel,
the values of the moves that leave the tier read from the lower tiers in the window); the
solver kernel turns it into margin records with threshold attractors, on every thread, in the
kernel thread of solver/kernels.py.  The tier manager (solver/tiers.py) does the rest."""
from __future__ import annotations


from .contract import Game
from .kernels import RecordLimit, ScorePart, solve_score_tier
from .tiers import TierProgress, default_threads


class ScoreTierWorker:
    """Solves one score tier."""
    # the first sweep visits every position once, the attractors settle each at most once more
    passes = 2

    def __init__(self, game: Game, threads: int | None = None):
        self.game = game
        self.threads = default_threads() if threads is None else threads

    def __call__(self, tier: int, window: dict, calls: TierProgress):
        try:
            records, long, _finals, _endless = solve_score_tier(
                self.game.score_tier(tier, window), self.threads)
        except RecordLimit as exc:
            stones = self.game.tier_stones(tier)
            raise RecordLimit(f"{self.game.tier_name(tier)}: {exc}; the tiers solved before it are "
                              f"kept, and an endgame table of at most {stones - 1} {self.game.pieces} "
                              f"(--max-stones {stones - 1}) stops before it") from None
        return self.game.value_kind.tier_data(records, long)

    def part(self, tier: int, window: dict, lo: int, hi: int, threads: int = 1) -> ScorePart:
        """The block lo <= i < hi of the tier, for a solve split across processes
        (solver/splittier.py); the same records as the whole tier's solve."""
        return ScorePart(self.game.score_tier(tier, window), lo, hi, threads)

    def assemble(self, records, long):
        """A split tier's records and long table, as the whole tier's solve returns them."""
        return self.game.value_kind.tier_data(records, long)
