"""The resolved request of ``rp.counterfactual``: what both engines (and ``to_sql``) compute.

Both engines compute one table of *parts*, one row per logged ranking (and per position for the
self-normalised independent / RIPS forms, whose normalisers are per position): the sums over
the ranking's rows from which every estimate, its bootstrap and its effective sample size
follow (:mod:`.finish`).  Columns, per metric ``i``:

* ``y_i``: Σ over the ranking's rows of the weighted reward (ips / snips: λ_i(rank in the
  candidate) · click / examination(logged position); slate: click · π_e / π_b);
* ``sup_i``: the clicks with a non-zero weight (the clicks that *support* the estimate);
* ``w1_i``, ``w2_i``: Σ w and Σ w² of the importance weights, for Kish's effective sample size;
* ``den``, ``cnt``: the self-normaliser's sums (snips: Σ click · w and Σ click over all clicks;
  sn slate forms: Σ π_e / π_b and the number of rows); ``clicks``: every logged click.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rank_polars.clicks.counterfactual.spec import POSITION_BASED, SLATE, Weight

#: Internal column names (the inputs are renamed to these before either engine runs).
Q, D, P, C, R, T, B, E = "_q", "_d", "_p", "_c", "_r", "_t", "_b", "_e"
SLOT = "_slot"


@dataclass(frozen=True)
class Plan:
    """One ``counterfactual`` request, with the names of the input columns resolved."""

    estimator: str
    weights: tuple[Weight, ...]
    by: tuple[str, ...] = ()
    session: tuple[str, ...] = ()
    clip: float | None = None
    #: slate estimators: the candidate is a ranking (evaluation propensities 1 / 0) or None
    #: (the log carries the evaluation policy's propensities)
    deterministic: bool = True
    #: the group columns the examination frame carries (joined on with the position)
    examination_by: tuple[str, ...] = field(default=())

    @property
    def keys(self) -> list[str]:
        """The columns naming one logged ranking."""
        return [*self.by, Q, *self.session]

    @property
    def slate(self) -> bool:
        return self.estimator in SLATE

    @property
    def position_based(self) -> bool:
        return self.estimator in POSITION_BASED

    @property
    def self_normalised(self) -> bool:
        return self.estimator.startswith("sn")

    @property
    def per_position(self) -> bool:
        """Self-normalised per position (OBP's SNIIPS / SNRIPS normalise each slot separately)."""
        return self.estimator in ("sn_independent_ips", "sn_rips")

    @property
    def needs_ranks_length(self) -> bool:
        return any(w.kind in ("p", "ctr") for w in self.weights)

    @property
    def lengths(self) -> dict[str, int | None]:
        """The candidate's list lengths the weights divide by, per query: column -> the cutoff
        its rows are counted to (None: every row), as :attr:`.spec.Weight.length` names them."""
        return {w.length: w.k if w.kind == "ctr" else None for w in self.weights if w.kind in ("p", "ctr")}

    @property
    def needs_theta_at_rank(self) -> bool:
        return any(w.needs_examination_at_rank for w in self.weights)

    def part_columns(self) -> list[str]:
        cols = [f"{name}_{i}" for i in range(len(self.weights)) for name in ("y", "sup", "w1", "w2")]
        return [*cols, "den", "cnt", "clicks"]
