"""The score table of a tuning run (``<name>_scores.md``): every point run
(the first grid and every widening), its median score and range over the
tuning seeds per dataset, its aggregate, the round that ran it, the
chosen point marked, and whether the choice is finished, so a reader sees
each method's sensitivity to its steps."""
import math

from benchmark_utils.tuning.grids import plain_number


def _number(value):
    if math.isinf(value):
        return "inf"
    return f"{value:.3g}"


def finish_note(result):
    """A line saying whether the choice is finished (module doc of
    :mod:`~benchmark_utils.tuning.search`), or None where it is interior
    on every parameter."""
    if result.ranking.leader is None:
        return ("no point is eligible (each diverged, erred or was dropped "
                "on some dataset or seed): the default is kept")
    if not result.ranking.working:
        return (f"{NO_WORKING_STEP}: no eligible point's median gain on its "
                "start exceeds the seeds' spread on every dataset (grid "
                "tried: " + grid_tried(result) + "); the tie rule's choice "
                "is kept, and every claim about this solver reads \"not "
                "testable here\"")
    if result.flat and result.open:
        return ("UNFINISHED (flat): every point run ties, so the method does "
                "not respond to the parameter over them, and values beyond "
                "the edges were not run (" + "; ".join(
                    dict.fromkeys(d.text() for _, d in result.open))
                + "); raise --widen")
    if result.open and not result.unfinished:
        return ("UNFINISHED (best point): the point with the best aggregate, "
                "which a tie left unchosen, has neighbours not run ("
                + "; ".join(dict.fromkeys(d.text() for _, d in result.open))
                + "); raise --widen")
    if result.unfinished:
        return ("UNFINISHED: the choice is on the edge of the points run "
                "with no verdict beyond it ("
                + "; ".join(d.text() for d in result.unfinished)
                + "); raise --widen, or set the chosen values in the "
                "config's entry and tune again")
    if result.flat:
        return ("flat: every point run ties (the method does not respond "
                "to the parameter over them) and the values beyond both "
                "edges are ineligible or refused: the tie rule's choice is "
                "kept")
    edges = [d for d in result.directions if d.status != "interior"]
    if edges:
        return "finished on an edge: " + "; ".join(d.text() for d in edges)
    return None


NO_WORKING_STEP = "no working step found here"


def grid_tried(result):
    """Each tuned parameter's values run, lowest to highest."""
    names = result.lattice.names
    return "; ".join(
        f"{name} in [" + ", ".join(plain_number(v) for v in sorted(
            {s.point[name] for s in result.scores})) + "]" for name in names)


def _start(scores, dataset):
    """The runs' start (first evaluation) on ``dataset``, scored alike:
    the same for every point where it does not depend on the steps."""
    starts = [v for s in scores for v in s.starts.get(dataset, [])
              if math.isfinite(v)]
    if not starts:
        return ""
    return (f"; runs start at {_number(min(starts))}" if
            min(starts) == max(starts) else
            f"; runs start in [{_number(min(starts))}, "
            f"{_number(max(starts))}]")


def _verdict(result, index):
    ranking = result.ranking
    if index == ranking.chosen:
        return "**chosen**"
    if not ranking.eligible[index]:
        return "ineligible"
    if ranking.no_gain[index]:
        return "no gain"
    if index in ranking.tied:
        return "tie"
    return ""


def solver_table(entry, result, criteria):
    """Markdown lines of one solver's table (``result``: a
    :class:`~benchmark_utils.tuning.search.SearchResult`)."""
    names = result.lattice.names
    center = result.lattice.center
    ranking = result.ranking
    datasets = ranking.datasets
    lines = [f"### {entry}", ""]
    for index, dataset in enumerate(datasets, 1):
        best = ranking.best_scores[dataset]
        lines.append(f"- dataset {index}: `{dataset}`; criterion: "
                     f"{criteria.get(dataset, '')}; best eligible median "
                     f"{_number(best) if best is not None else 'none'}"
                     + _start(result.scores, dataset))
    lines.append("- centre of the grid (resolved default or the entry's "
                 "value): " + ", ".join(
                     f"{n} = {center[n]:.6g}" for n in names))
    lines.append(f"- points run: {len(result.keys)} ({result.rounds.count(0)}"
                 f" in the first grid, {result.n_rounds} widening "
                 "round(s)); aggregate: geometric mean over datasets of "
                 "median / best eligible median, [min, max] from the "
                 "seeds' minima and maxima; tie: aggregate within the "
                 "best's seed range; no gain: the runs' median gain on their "
                 "start does not exceed the seeds' spread on every dataset, "
                 "not a choice")
    lines.append("")
    header = [*names, *(f"dataset {i}: median [min, max]"
                        for i in range(1, len(datasets) + 1)),
              "aggregate [min, max]", "round", "verdict"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    order = sorted(range(len(result.keys)),
                   key=lambda i: tuple(result.keys[i]))
    for index in order:
        scores = result.scores[index]
        cells = [plain_number(scores.point[n]) for n in names]
        for dataset in datasets:
            if dataset not in scores.runs:
                cells.append("missing")
                continue
            low, high = scores.spread(dataset)
            cells.append(f"{_number(scores.median(dataset))} "
                         f"[{_number(low)}, {_number(high)}]")
        cells.append(f"{_number(ranking.aggregate[index])} "
                     f"[{_number(ranking.low[index])}, "
                     f"{_number(ranking.high[index])}]")
        cells.append(str(result.rounds[index]))
        cells.append(_verdict(result, index))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    note = finish_note(result)
    if note:
        lines += [f"Note: {note}.", ""]
    return lines


def write_scores(path, title_lines, tables, untuned):
    """Write the score table file: a title block, one table per tuned
    solver, and the entries kept as they are with the reason."""
    lines = [*title_lines, ""]
    for table in tables:
        lines += table
    if untuned:
        lines += ["### Kept as they are", ""]
        lines += [f"- `{entry}`: {reason}" for entry, reason in untuned]
        lines.append("")
    path.write_text("\n".join(lines))
