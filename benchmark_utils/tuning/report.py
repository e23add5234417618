"""The score table of a tuning run (``<name>_scores.md``): every grid
point's median score and its range over the tuning seeds, per solver and
dataset, the chosen point marked, so a reader sees each method's
sensitivity to its steps."""
import math

from benchmark_utils.tuning.grids import plain_number


def _number(value):
    if math.isinf(value):
        return "inf"
    return f"{value:.3g}"


def edge_parameters(scores, chosen):
    """The parameters whose chosen value is the smallest or the largest of
    its grid (of more than one value): the best value may lie outside."""
    point = scores[chosen].point
    edges = []
    for name, value in point.items():
        values = {s.point[name] for s in scores}
        if len(values) > 1 and value in (min(values), max(values)):
            edges.append(name)
    return edges


def edge_note(scores, chosen):
    """A line warning that the chosen point is on the grid's edge, or
    None."""
    edges = edge_parameters(scores, chosen)
    if not edges:
        return None
    return (f"chosen on the grid's edge in {', '.join(edges)}: the best "
            "value may lie outside the grid; to look further, set the "
            "chosen value in the config's entry (it becomes the centre) "
            "and tune again")


def solver_table(entry, scores, chosen, center, criteria, selection):
    """Markdown lines of one solver's table."""
    names = list(center)
    datasets = list(scores[0].runs)
    lines = [f"### {entry}", ""]
    for index, dataset in enumerate(datasets, 1):
        lines.append(f"- dataset {index}: `{dataset}`; criterion: "
                     f"{criteria[dataset]}")
    lines.append("- centre of the grid (resolved default or the entry's "
                 "value): " + ", ".join(
                     f"{n} = {center[n]:.6g}" for n in names))
    lines.append("")
    header = [*names, *(f"dataset {i}: median [min, max]"
                        for i in range(1, len(datasets) + 1))]
    if len(datasets) > 1:
        header.append("median ratio to default")
    header.append("chosen")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for index, entry_scores in enumerate(scores):
        cells = [plain_number(entry_scores.point[n]) for n in names]
        for dataset in datasets:
            low, high = entry_scores.spread(dataset)
            cells.append(f"{_number(entry_scores.median(dataset))} "
                         f"[{_number(low)}, {_number(high)}]")
        if len(datasets) > 1:
            cells.append(_number(selection[index]))
        cells.append("**yes**" if index == chosen else "")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    note = edge_note(scores, chosen)
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
