"""Every shipped score table (configs/tuned/*_scores.md) shows a finished
tuning under the current protocol: 3 tuning seeds, the tuning budget the
config's evaluation budget (or the reason it is not), no UNFINISHED
choice, and no leader left unwidened (a point that beats the one behind
it beyond the seeds' spread, a tie having chosen another, whose next value
out was not run: the search would run it, benchmark_utils/tuning/search.py).
The tables still tuned under an earlier protocol or rule are listed with
the reason and fail as expected until they are tuned again."""
import math
import re

import pytest

from conftest import ROOT

TUNED = ROOT / "configs" / "tuned"
TABLES = sorted(TUNED.glob("*_scores.md"))
GAVE_UP = ("a tie gave up a measured gain under the earlier tie rule (the "
           "choice's aggregate above the leader's seed range)")
# tables tuned under an earlier rule, each with the entry to re-tune
PENDING = {}


def number(text):
    return math.inf if text.strip() in ("inf", "nan") else float(text)


def solver_tables(text):
    """``(entry, names, {point: (aggregate, low, high)}, chosen,
    stalled)`` of each solver section of a score table (``stalled``: the
    points run that are not choices: "no gain", or "stalled" under the
    earlier rule, benchmark_utils/tuning/scoring.py)."""
    for section in text.split("\n### ")[1:]:
        rows = [[c.strip() for c in line.strip().strip("|").split("|")]
                for line in section.splitlines() if line.startswith("| ")]
        if not rows:
            continue        # "Kept as they are": no grid
        header, body = rows[0], rows[1:]
        n_params = next(i for i, h in enumerate(header)
                        if h.startswith("dataset"))
        column = header.index("aggregate [min, max]")
        points, chosen, stalled = {}, None, set()
        for row in body:
            key = tuple(number(v) for v in row[:n_params])
            found = re.match(r"(\S+) \[(\S+), (\S+)\]", row[column])
            points[key] = tuple(number(v) for v in found.groups())
            if "chosen" in row[-1]:
                chosen = key
            if row[-1] in ("stalled", "no gain"):
                stalled.add(key)
        yield (section.splitlines()[0], header[:n_params], points, chosen,
               stalled)


def unwidened_leaders(text):
    """The directions the leader rule would still run: ``(entry, name,
    factor)`` for each leader that beats the point behind it beyond the
    seeds' spread while the next value out was not run."""
    found = []
    for entry, names, points, chosen, stalled in solver_tables(text):
        # an exact tie with the chosen point is the chosen point (the tie
        # rule picked it: deterministic runs give equal medians)
        leader = min((k for k in points if k not in stalled),
                     key=lambda k: (points[k][0], k != chosen))
        if leader == chosen or not math.isfinite(points[leader][0]):
            continue
        for i, name in enumerate(names):
            values = sorted({k[i] for k in points})
            position = values.index(leader[i])
            for sign in (-1, 1):
                ahead, behind = position + sign, position - sign
                if 0 <= ahead < len(values) and any(
                        k[i] == values[ahead] and all(
                            k[j] == leader[j] for j in range(len(names))
                            if j != i) for k in points):
                    continue
                if not 0 <= behind < len(values):
                    continue
                key = tuple(values[behind] if j == i else leader[j]
                            for j in range(len(names)))
                if key in points and points[leader][0] < points[key][1]:
                    found.append((entry, name, sign))
    return found


def gains_given_up(text):
    """``(entry, chosen aggregate, leader's [low, high])`` of each choice
    whose aggregate lies above the seed range of the best point that is a
    choice (the leader): a tie that gave up a measured gain."""
    found = []
    for entry, _, points, chosen, stalled in solver_tables(text):
        choices = [k for k in points if k not in stalled]
        if chosen is None or not choices:
            continue
        leader = min(choices, key=lambda k: points[k][0])
        if points[chosen][0] > points[leader][2] * (1 + 1e-12):
            found.append((entry, points[chosen][0], points[leader][1:]))
    return found


def check(path):
    text = path.read_text()
    assert "3 repetition(s) per point" in text, "fewer than 3 seeds"
    budget = next(line for line in text.splitlines()
                  if line.startswith("Budget:"))
    assert "the same budget" in budget or "by --evaluate-at because" in \
        budget, budget
    assert "UNFINISHED" not in text
    assert not untuned_entries(path)
    assert not unwidened_leaders(text)
    assert not gains_given_up(text)


def untuned_entries(path):
    """The entries a tuning left "not selected by --solver" whose solver
    has no table in this file or a sibling's (a tuning in pieces whose
    last piece has not run; a sibling: one experiment's entries tuned at
    another budget, e.g. ``..._n100_sbfw_scores.md``)."""
    name = path.stem.removesuffix("_scores")
    tuned = set()
    for sibling in {path, *TABLES}:
        other = sibling.stem.removesuffix("_scores")
        if other.startswith(name) or name.startswith(other):
            tuned |= {entry.split("[")[0] for entry, *_ in
                      solver_tables(sibling.read_text())}
    left = re.findall(r"^- `([^`\[]+)[^`]*`: not selected by --solver$",
                      path.read_text(), re.M)
    return sorted(set(left) - tuned)


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_a_shipped_score_table_is_finished(path):
    name = path.stem.removesuffix("_scores")
    if name in PENDING:
        pytest.xfail(PENDING[name])
    check(path)


@pytest.mark.parametrize("name", sorted(PENDING))
def test_a_pending_table_still_fails_the_check(name):
    """A table listed as pending that passes must leave the list (no
    table pending: pytest reports this test skipped, not passed)."""
    with pytest.raises(AssertionError):
        check(TUNED / f"{name}_scores.md")


def test_the_check_finds_a_leader_left_unwidened():
    """Made-up table: the default (0.1) chosen by a tie while the leader
    (1) beats it beyond its spread and 10 was not run."""
    table = "\n".join([
        "# scores", "", "### S", "", "| step | dataset 1: median [min, max] | "
        "aggregate [min, max] | round | verdict |", "|---|---|---|---|---|",
        "| 0.01 | 3 [3, 3] | 3 [3, 3] | 0 |  |",
        "| 0.1 | 1.5 [1.1, 2] | 1.5 [1.1, 2] | 0 | **chosen** |",
        "| 1 | 1 [0.8, 1.2] | 1 [0.8, 1.2] | 0 | tie |", ""])
    assert unwidened_leaders(table) == [("S", "step", 1)]
    # within the noise: nothing to widen
    assert not unwidened_leaders(table.replace("1.5 [1.1, 2]",
                                               "1.5 [0.9, 2]"))
    # a stalled point (not a choice) is never the leader
    assert not unwidened_leaders(table.replace(
        "| 1 [0.8, 1.2] | 0 | tie |", "| 1 [0.8, 1.2] | 0 | stalled |"))


def test_the_check_finds_a_tie_that_gave_up_a_gain():
    """Made-up table (SBCGF on the regressions): the default's median is
    5x the leader's, beyond the leader's seed range."""
    table = "\n".join([
        "# scores", "", "### S", "", "| step | dataset 1: median [min, max] | "
        "aggregate [min, max] | round | verdict |", "|---|---|---|---|---|",
        "| 0.00001 | 5.35 [0.858, 6.54] | 5.35 [0.858, 6.54] | 0 | "
        "**chosen** |",
        "| 0.0001 | 1 [0.616, 1.09] | 1 [0.616, 1.09] | 0 | tie |", ""])
    assert gains_given_up(table) == [("S", 5.35, (0.616, 1.09))]
    assert not gains_given_up(table.replace("5.35 [0.858, 6.54] |", "1.05 "
                                            "[0.858, 6.54] |"))
    # a point without gain is never the leader
    assert not gains_given_up(table.replace("| 0 | tie |", "| 0 | no gain |"))


def test_the_check_finds_a_tuning_in_pieces_left_unfinished(tmp_path):
    """Made-up table of a first piece: SOBA tuned, stocBiO not yet."""
    path = tmp_path / "made_up_scores.md"
    path.write_text("\n".join([
        "# scores", "", "### SOBA", "", "| step | dataset 1: median [min, "
        "max] | aggregate [min, max] | round | verdict |",
        "|---|---|---|---|---|", "| 1 | 1 [1, 1] | 1 [1, 1] | 0 | "
        "**chosen** |", "", "### Kept as they are", "",
        "- `stocBiO[neumann_terms=6]`: not selected by --solver",
        "- `Without-BO`: x stays at x0", ""]))
    assert untuned_entries(path) == ["stocBiO"]
