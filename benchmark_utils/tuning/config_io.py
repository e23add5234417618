"""Read an experiment config, write benchopt entries, run configs and the
tuned config.

An entry is benchopt's selector, ``name[param=value,...]`` (a string) or
the nested form ``{name: {param: value}}``; both are read into
``(name, params)`` and always written back as strings, with numbers as
plain decimals (:func:`~benchmark_utils.tuning.grids.plain_number`).
"""
import ast
import difflib
import re
from pathlib import Path

import yaml

from benchmark_utils.sample_budget import check_sample_budget
from benchmark_utils.tuning.grids import plain_number

EVALUATION_REPETITIONS = 10
# a tuned config runs at the tuning's iteration budget; its timeout (seconds
# per run) is only a cap against a run that hangs, not the budget
SAFETY_TIMEOUT = 600
# the tuned config's evaluation runs use benchopt's --seed 0, the tuning
# runs TUNING_SEED: the per-repetition seeds of the two never coincide
EVALUATION_SEED = 0

_BARE_STRING = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def read_config(path, label="CONFIG"):
    """The config's content (a dict), checked to select datasets and
    solvers; ``label`` names the argument it came from in the messages
    (CONFIG, --transfer-from)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{label} must be an existing YAML file, got {path}")
    try:
        content = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = (f"line {mark.line + 1}, column {mark.column + 1}: "
                 if mark is not None else "")
        problem = getattr(error, "problem", None) or str(error)
        raise ValueError(f"{label} {path} is not valid YAML: {where}"
                         f"{problem}") from None
    if not isinstance(content, dict):
        raise ValueError(f"{label} {path} must be a YAML mapping")
    # benchopt reads its options with "-" or "_" (max-runs, max_runs)
    content = {str(key).replace("_", "-"): value
               for key, value in content.items()}
    for key in ("dataset", "solver"):
        if not content.get(key):
            near = difflib.get_close_matches(
                key, [other for other in content if other != key], n=1)
            hint = (f" (its key {near[0]!r} is not one: benchopt reads "
                    f"{key!r})" if near else "")
            raise ValueError(f"{label} {path} must list at least one "
                             f"{key}{hint}")
    return content


def is_tuned_config(path):
    """Whether the file at ``path`` was written by the tuning command (its
    header's first line says "Tuned by")."""
    first = Path(path).read_text().splitlines()[:1]
    return bool(first) and first[0].startswith("# Tuned by:")


def as_list(value):
    return value if isinstance(value, list) else [value]


def parse_entry(entry):
    """``(name, params)`` of a benchopt selector (string or nested dict)."""
    if isinstance(entry, dict):
        if len(entry) != 1:
            raise ValueError(f"an entry in nested form has one name: {entry}")
        (name, params), = entry.items()
        return name, dict(params or {})
    return parse_selector(entry)


def parse_selector(entry):
    """``(name, params)`` of ``name[param=value,...]``, benchopt's selector
    syntax: a value is a Python literal, a bare string, or a list of them
    in brackets."""
    match = re.fullmatch(r"\s*([^\[\]]+?)\s*(?:\[(.*)\])?\s*", entry)
    if match is None:
        raise ValueError(f"invalid entry {entry!r}: write name or "
                         "name[param=value,...]")
    name, inner = match.groups()
    params = {}
    for item in _top_level_split(inner or ""):
        key, equals, value = item.partition("=")
        if not equals or not key.strip().isidentifier():
            raise ValueError(f"in entry {entry!r}, {item!r} is not "
                             "param=value: name each parameter")
        params[key.strip()] = _selector_value(value.strip())
    return name, params


def _top_level_split(text):
    """``text`` split at the commas outside brackets, blanks dropped."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _selector_value(text):
    if text.startswith("[") and text.endswith("]"):
        return [_selector_value(v) for v in _top_level_split(text[1:-1])]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def format_value(value):
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)):
        return plain_number(value) if isinstance(value, float) else str(value)
    if isinstance(value, list):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    if isinstance(value, str) and _BARE_STRING.fullmatch(value):
        return value
    return repr(value)


def format_entry(name, params):
    """The selector string ``name[param=value,...]`` (benchopt's syntax)."""
    if not params:
        return name
    inner = ",".join(f"{k}={format_value(v)}" for k, v in params.items())
    return f"{name}[{inner}]"


def write_run_config(path, content, solver_entry, *, n_repetitions,
                     max_runs, seed, output, parallel=None):
    """A benchopt run config for one solver's grid (an entry, or a list of
    entries: the points of a widening): the experiment's datasets and
    objective, no timeout (the budget is ``max_runs`` evaluations, a fixed
    iteration count), the tuning seed; ``parallel``: the keys that send
    the runs to a parallel backend (runner.parallel_options)."""
    run = {key: content[key] for key in ("objective", "dataset")
           if key in content}
    run.update({
        "solver": list(as_list(solver_entry)),
        "n-repetitions": n_repetitions,
        "max-runs": max_runs,
        "no-timeout": True,
        "seed": seed,
        "plot": False,
        "display": False,
        "output": str(output),
        **(parallel or {}),
    })
    _dump(path, run)


def tuned_content(content, entries, max_runs, keep_timeout=False):
    """The experiment's config with its solver list replaced by
    ``entries`` (strings), 10 repetitions, the evaluation seed and the
    tuning's budget: ``max_runs`` evaluations (the iteration the steps were
    chosen at), with a timeout only as a safety cap
    (``SAFETY_TIMEOUT``), or the config's own where ``keep_timeout`` (part
    of a paper's budget: K iterations or T seconds, whichever first); the
    other run options (output, plots...) are kept."""
    tuned = {"n-repetitions": EVALUATION_REPETITIONS,
             "seed": content.get("seed", EVALUATION_SEED),
             "max-runs": max_runs,
             "timeout": (content["timeout"] if keep_timeout
                         else SAFETY_TIMEOUT)}
    tuned.update({k: v for k, v in content.items()
                  if k not in tuned and k != "no-timeout"})
    tuned["solver"] = list(entries)
    return tuned


def write_tuned_config(path, content, header_lines):
    """Write ``content`` with ``header_lines`` as a comment block."""
    header = "".join(f"# {line}".rstrip() + "\n" for line in header_lines)
    _dump(path, content, header)


def _dump(path, content, header=""):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a wide line: selectors stay on one line, readable and greppable
    text = yaml.safe_dump(content, sort_keys=False, width=10_000,
                          default_flow_style=False)
    path.write_text(header + text)


def config_sample_budget(objective_entries):
    """The ``sample_budget`` a config's ``objective`` entries set (one
    value; None where none is set); ValueError for several values or a bad
    one."""
    budgets = set()
    for entry in as_list(objective_entries or []):
        value = parse_entry(entry)[1].get("sample_budget")
        budgets.update(value if isinstance(value, list) else [value])
    budgets.discard(None)
    if len(budgets) > 1:
        raise ValueError(f"the config's objective sets several "
                         f"sample_budget values {sorted(budgets)}: tune one "
                         "budget at a time")
    budget = budgets.pop() if budgets else None
    check_sample_budget(budget)
    return None if budget is None else int(budget)
