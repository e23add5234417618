"""The growing grid of one solver: run the first grid, then widen around
the choice until it is finished, never running a point twice.

A point is a key, one lattice index per tuned parameter
(:class:`~benchmark_utils.tuning.grids.Axis`); its neighbours are the 2D
keys one index away along one parameter. The search keeps every point it
has run (one growing grid per solver, on the same lattice as the first
grid, so a widened point equals a first-grid point exactly) and selects
over all of them (:func:`~benchmark_utils.tuning.scoring.rank`). For the
chosen point each direction (a parameter, down or up) is:

* ``interior``: the neighbour was run and is a candidate (eligible,
  improving on its start where any eligible point does);
* ``ineligible``: the neighbour was run and diverged, erred or was dropped
  on some dataset or seed (the next value out diverges);
* ``no gain``: the neighbour was run and does not improve on its start
  beyond the seeds' spread (:mod:`~benchmark_utils.tuning.scoring`): toward
  smaller steps the values beyond it move the method still less, toward
  larger ones it already makes the method worse (the next value out does
  not work);
* ``refused``: the neighbour is refused by the solver's checks, or beyond
  the lattice's end (an integer knob below 1);
* ``unfinished``: the neighbour was not run.

A widening round runs the chosen point's ``unfinished`` neighbours (the
values beyond its edge along each tuned dimension, and, for a point that
widening added, the neighbours it lacks along the others), and those of the
**leader**, the point with the best aggregate, where a tie gave the choice
to another (the default or a smaller step) and the leader beats the point
behind it, along that parameter, beyond the seeds' spread (its aggregate
below that point's lowest): a trend the noise does not explain, so a better
value beyond the leader could end the tie (a leader merely ahead within the
noise is not chased along a plateau). A **flat** grid, where every
candidate (eligible, and improving where any eligible point improves) ties
with the leader (the method does not respond to the parameter over the
grid, and the tie rule would pick the default whatever the method could
do), is not finished either: its round runs the ``unfinished`` neighbours
of every candidate (the values beyond both edges), until a point stops
tying, the next values out are ineligible, without gain or refused, or the
rounds run out (reported flat). The search stops when no such direction is
``unfinished`` (the choice and the leader are interior, or on an edge
whose next value out is ineligible, without gain or refused: a finished
choice), when no point is eligible (nothing to widen from), or after
``widen`` rounds (the budget; an ``unfinished`` direction is then
reported). Where no eligible point improves on its start, the report says
"no working step found here" with the grid tried.

Termination and no cycle: a round runs at least one point and only points
not run before (the ``unfinished`` neighbours are, by definition, not run),
so the set of points run grows strictly each round and no point is run
twice; there are at most ``widen`` rounds. The choice is a deterministic
function of the scores of the points run (``rank``: a fixed aggregate per
point and a fixed order among ties), so the same scores give the same
choices, whatever the order the points were run in.
"""
import itertools
from dataclasses import dataclass, field

from benchmark_utils.tuning import scoring
from benchmark_utils.tuning.grids import plain_number

DIRECTIONS = (-1, 1)


@dataclass
class Lattice:
    """The tuned parameters' axes, the first grid (the lattice indices of
    each axis: their product), and ``refusal(name, index)`` -> the reason
    a lattice point is left out, or None."""
    axes: list
    first: list
    refusal: object = None

    @property
    def names(self):
        return [axis.name for axis in self.axes]

    @property
    def center(self):
        return {axis.name: axis.center for axis in self.axes}

    def point(self, key):
        return {axis.name: axis.value(k)
                for axis, k in zip(self.axes, key, strict=True)}

    def first_keys(self):
        return list(itertools.product(*self.first))

    def refused(self, axis, index):
        return self.refusal(axis.name, index) if self.refusal else None


@dataclass
class Direction:
    """The state of one direction of the chosen point (module doc)."""
    name: str
    sign: int
    status: str     # interior, ineligible, no gain, refused, unfinished
    value: float        # the neighbour's value
    detail: str = ""    # the refusal's message

    def text(self):
        side = "below" if self.sign < 0 else "above"
        value = plain_number(self.value)
        return {
            "interior": f"{self.name} {side}: {value} run, eligible",
            "ineligible": f"{self.name} {side}: the next value out, "
                          f"{value}, diverged, erred or was dropped (edge "
                          "allowed)",
            "no gain": f"{self.name} {side}: the next value out, {value}, "
                       "does not improve on its start beyond the seeds' "
                       "spread (not a choice) (edge allowed)",
            "refused": f"{self.name} {side}: the next value out, {value}, "
                       f"is refused ({self.detail}) (edge allowed)",
            "unfinished": f"{self.name} {side}: UNFINISHED, the next value "
                          f"out, {value}, was not run (--widen budget "
                          "spent)",
        }[self.status]


@dataclass
class SearchResult:
    lattice: Lattice
    keys: list = field(default_factory=list)        # in the order run
    scores: list = field(default_factory=list)      # PointScores, aligned
    rounds: list = field(default_factory=list)      # the round of each
    ranking: object = None
    directions: list = field(default_factory=list)  # of the chosen point
    history: list = field(default_factory=list)     # chosen key per round
    open: list = field(default_factory=list)        # (key, Direction):
    # the next round's: the unfinished directions of the chosen point (of
    # every candidate in a flat grid) and of the leader toward its
    # trend (module doc, open_directions)

    @property
    def flat(self):
        """Every candidate ties with the leader (at least two: the others
        diverged, erred, were dropped or gained nothing)."""
        ranking = self.ranking
        if ranking is None or ranking.leader is None:
            return False
        candidates = set(ranking.candidates)
        return len(candidates) > 1 and candidates <= set(ranking.tied)

    @property
    def chosen(self):
        return self.ranking.chosen

    @property
    def chosen_point(self):
        return self.scores[self.chosen].point

    @property
    def unfinished(self):
        return [d for d in self.directions if d.status == "unfinished"]

    @property
    def n_rounds(self):
        return max(self.rounds, default=0)


def neighbour(key, position, sign):
    return tuple(k + sign if i == position else k
                 for i, k in enumerate(key))


def directions(lattice, key, index_of, ranking):
    """The :class:`Direction` of each parameter and side of ``key``;
    ``index_of`` maps a key run to its index in the ranking."""
    found = []
    for position, axis in enumerate(lattice.axes):
        for sign in DIRECTIONS:
            other = neighbour(key, position, sign)
            value = axis.value(other[position])
            reason = lattice.refused(axis, other[position])
            if reason:
                found.append(Direction(axis.name, sign, "refused", value,
                                       reason))
            elif other in index_of:
                index = index_of[other]
                status = ("ineligible" if not ranking.eligible[index]
                          else "interior" if index in ranking.candidates
                          else "no gain")
                found.append(Direction(axis.name, sign, status, value))
            else:
                found.append(Direction(axis.name, sign, "unfinished", value))
    return found


def open_directions(result, index_of):
    """The next round's ``(key, Direction)`` pairs (module doc): the
    chosen point's unfinished directions (every candidate's in a flat
    grid or where no point improves on its start), and the leader's where
    a tie left it unchosen and it beats the neighbour behind it beyond the
    seeds' spread."""
    lattice, ranking = result.lattice, result.ranking
    # no working step yet: look beyond every candidate, as a flat grid does
    anchors = (list(ranking.candidates) if result.flat or not ranking.working
               else [ranking.chosen])
    found = [(result.keys[i], d) for i in anchors
             for d in directions(lattice, result.keys[i], index_of, ranking)
             if d.status == "unfinished"]
    leader = ranking.leader
    if leader is None or leader in anchors:
        return found
    key = result.keys[leader]
    for d in directions(lattice, key, index_of, ranking):
        behind = index_of.get(neighbour(key, lattice.names.index(d.name),
                                        -d.sign))
        # a trend the seeds' noise does not explain: the leader's
        # aggregate below the lowest of the point behind it
        if (d.status == "unfinished" and behind is not None
                and ranking.aggregate[leader] < ranking.low[behind]):
            found.append((key, d))
    return found


def search(lattice, run, widen):
    """Run the first grid, then at most ``widen`` widening rounds (module
    doc). ``run(keys, round)`` returns the :class:`PointScores` of those
    keys (new ones only), in order: benchopt's runs, or made-up scores in
    a test."""
    result = SearchResult(lattice)
    index_of = {}

    def add(keys, round_):
        scores = run(keys, round_)
        for key, entry in zip(keys, scores, strict=True):
            if key in index_of:
                raise RuntimeError(f"point {key} run twice")
            index_of[key] = len(result.keys)
            result.keys.append(key)
            result.scores.append(entry)
            result.rounds.append(round_)
        result.ranking = scoring.rank(result.scores, lattice.center)
        chosen = result.keys[result.ranking.chosen]
        result.directions = directions(lattice, chosen, index_of,
                                       result.ranking)
        result.history.append(chosen)
        result.open = open_directions(result, index_of)

    add(lattice.first_keys(), 0)
    for round_ in range(1, widen + 1):
        if result.ranking.leader is None:
            break               # nothing eligible to widen from
        todo = list(dict.fromkeys(
            neighbour(key, lattice.names.index(d.name), d.sign)
            for key, d in result.open))
        if not todo:
            break               # finished: interior, or an allowed edge
        add(todo, round_)
    return result
