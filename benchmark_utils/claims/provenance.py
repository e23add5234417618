"""What an experiment's evidence was made from, pinned in its meta.yml,
and what in the tree no longer matches it.

``claims run`` records, beside the commit, three kinds of digests
(:func:`sources` and ``results.file_digests``), SHA-256 in hex, 16
characters per code file:

* ``files``: of the evidence's own ``runs.csv.gz`` and ``params.csv``;
* ``config``: of the config file the evaluation config was made from;
* ``code``: of every file of the code the run ran: objective.py, the
  files of the solvers and datasets the config names, and every module of
  this repository they import, transitively (read from their import
  statements; benchopt's own code is pinned by its version).

``claims check`` fails when an evidence table differs from its pinned
digest (:func:`errors`). Where the experiment's config now gives another
config than the one run (:func:`config_changed`) or the code it ran
changed (:func:`stale_code`), the evidence is stale: its section of
docs/results.md says so, naming the config or the changed files and the
command that renews it (:func:`stale_text`), so a page that does not say
so fails ``check`` too.
"""
import ast
import functools
import hashlib
import math

import yaml

from benchmark_utils.claims.results import file_digests
from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.defaults import ROOT
from benchmark_utils.tuning.runner import RHO

CODE_DIGEST_LENGTH = 16
PACKAGE = "benchmark_utils"
# a horizon's sample cap, a safety only: this many times the config's
# sample budget, far beyond what any method draws by the horizon
SAMPLE_CAP_FACTOR = 100


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def at_budget(config, budget):
    """The tuned ``config`` at the longer sample ``budget`` of a ``_long``
    experiment: its objective's sample_budget raised, with as many more
    evaluations (max-runs: evaluations fall 1.5x apart) and as much more
    timeout (a safety cap) as the budget grows."""
    objective = config_io.as_list(config["objective"])
    factor = budget / config_io.config_sample_budget(objective)
    entries = [config_io.parse_entry(entry) for entry in objective]
    return {**config, "objective": [
        config_io.format_entry(name, {**params, "sample_budget": budget})
        for name, params in entries],
        "max-runs": min(100, config["max-runs"]
                        + math.ceil(math.log(factor) / math.log(RHO))),
        "timeout": math.ceil(config["timeout"] * factor)}


def at_horizon(config, horizon):
    """``config`` run to ``horizon`` CPU-seconds (the objective's
    cpu_budget, benchmark_utils/sample_budget.py), its sample budget
    (where it has one) raised :data:`SAMPLE_CAP_FACTOR` times as a safety
    cap, with benchopt's full 100 evaluations and a timeout (wall-clock)
    well beyond the horizon, so that no run ends before it."""
    objective = config_io.as_list(config["objective"])
    budget = config_io.config_sample_budget(objective)
    cap = {} if budget is None else {
        "sample_budget": SAMPLE_CAP_FACTOR * budget}
    entries = [config_io.parse_entry(entry) for entry in objective]
    return {**config, "objective": [
        config_io.format_entry(name, {**params, "cpu_budget": horizon,
                                      **cap})
        for name, params in entries],
        "max-runs": 100,
        "timeout": max(config["timeout"], math.ceil(10 * horizon) + 60)}


def evaluation_config(exp):
    """The config ``claims run`` gives benchopt for ``exp``: its config
    file with the evaluation's repetitions and seed, at its longer budget
    or CPU horizon, each solver entry once (a paper's "short" and "long"
    steps tuned to the same values are one solver)."""
    config = yaml.safe_load(exp.config.read_text())
    config.update({"n-repetitions": exp.repetitions, "seed": 0})
    if exp.source == "long":
        config = at_budget(config, exp.budget[1])
    if exp.horizon is not None:
        config = at_horizon(config, exp.horizon)
    config["solver"] = list(dict.fromkeys(config["solver"]))
    return config


# -- the code a config runs ---------------------------------------------------

def _declared_names(text):
    """The ``name = "..."`` of the classes in a solver or dataset file."""
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, ast.Assign) and len(item.targets) == 1
                        and getattr(item.targets[0], "id", None) == "name"
                        and isinstance(item.value, ast.Constant)):
                    names.add(item.value.value)
    return names


def _component_files(folder, entries, read, listing):
    wanted = {config_io.parse_entry(entry)[0] for entry in entries}
    return sorted(path for path in listing(folder)
                  if _declared_names(read(path)) & wanted)


def _module_files(module, read):
    """The files that importing ``module`` (dotted) runs: its package
    ``__init__``s and the module (a file or a package)."""
    parts = module.split(".")
    files = [f"{'/'.join(parts[:i])}/__init__.py"
             for i in range(1, len(parts))]
    files.append(next((candidate for candidate in (
        f"{'/'.join(parts)}.py", f"{'/'.join(parts)}/__init__.py")
        if read(candidate) is not None), None))
    return [f for f in files if f is not None and read(f) is not None]


@functools.lru_cache(maxsize=None)
def _imports(path, text):
    """The dotted modules of this repository that ``path`` imports
    (absolute and relative; ``from a import b`` also tries ``a.b``);
    parsed once per text (every experiment's walk reads the same
    files)."""
    package = path.removesuffix(".py").split("/")[:-1]
    modules = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[:len(package) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            modules.append(base)
            modules += [f"{base}.{alias.name}" for alias in node.names]
    return tuple(m for m in modules if m.split(".")[0] == PACKAGE)


def code_files(config, read, listing):
    """The repository files a benchopt run of ``config`` runs (module
    doc); ``read(path)``: a file's text or None, ``listing(folder)``: the
    ``.py`` files of a top folder."""
    todo = ["objective.py",
            *_component_files("solvers", config["solver"], read, listing),
            *_component_files("datasets", config["dataset"], read, listing)]
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in _imports(path, read(path)):
            todo += _module_files(module, read)
    return sorted(seen)


def _tree_reader(root):
    def read(path):
        file = root / path
        return file.read_text() if file.is_file() else None

    def listing(folder):
        return [f"{folder}/{f.name}" for f in (root / folder).glob("*.py")]
    return read, listing


def code_digests(config):
    """``{path: digest}`` of the code a run of ``config`` runs, in the
    repository's tree."""
    read, listing = _tree_reader(ROOT)
    return {path: sha256(read(path).encode())[:CODE_DIGEST_LENGTH]
            for path in code_files(config, read, listing)}


# -- pinning and checking -----------------------------------------------------

def sources(exp, config):
    """The ``config`` and ``code`` digests of meta.yml for a run of
    ``config`` made from ``exp``'s config file (module doc)."""
    return {"config": {str(exp.config.relative_to(ROOT)):
                       sha256(exp.config.read_bytes())},
            "code": code_digests(config)}


def errors(exp, meta):
    """Where ``exp``'s evidence tables are not those its run wrote (their
    digests differ from meta.yml's, or it pins none), one line each."""
    renew = f"`python -m benchmark_utils.claims run {exp.name}` renews it"
    files = (meta.get("digests") or {}).get("files")
    if not files:
        return [f"results/{exp.name}/meta.yml pins no digests; {renew}"]
    now = file_digests(exp.folder)
    return [f"results/{exp.name}/{name} is not the file its run wrote "
            f"(its digest differs from meta.yml's); {renew}"
            for name, digest in files.items() if now.get(name) != digest]


def config_changed(exp, meta):
    """Whether ``exp``'s config now gives another evaluation config than
    the one its evidence ran (a re-tune, an edited step)."""
    return evaluation_config(exp) != meta["config"]


def config_differences(exp, meta):
    """The settings in which ``exp``'s evaluation config and the one its
    evidence ran differ: ``key: old -> new`` for a number or a word, the
    count of entries in one and not the other for a list (solver entries,
    datasets), the key alone otherwise."""
    now, ran = evaluation_config(exp), meta["config"]

    def difference(key):
        old, new = ran.get(key), now.get(key)
        if all(isinstance(v, (int, float, str, type(None)))
               for v in (old, new)):
            return f"{key}: {old} -> {new}"
        if isinstance(old, list) and isinstance(new, list):
            changed = len({str(v) for v in old} ^ {str(v) for v in new})
            return f"{key}: {changed} entries in one and not the other"
        return key
    return [difference(key) for key in sorted(set(now) | set(ran))
            if now.get(key) != ran.get(key)]


def stale_code(meta):
    """The files of the code the evidence ran that differ in the tree
    now (changed, added to or gone from what the run imports)."""
    then = (meta.get("digests") or {}).get("code", {})
    now = code_digests(meta["config"])
    return sorted(path for path in set(then) | set(now)
                  if then.get(path) != now.get(path))


def stale_text(exp, meta):
    """The page's warning where the evidence no longer matches the tree
    (its config or the code it ran changed since), else ""."""
    reasons = []
    if config_changed(exp, meta):
        config = (exp.config.relative_to(ROOT)
                  if exp.config.is_relative_to(ROOT) else exp.config)
        reasons.append(f"`{config}` with the experiment's settings gives "
                       "another config than this evidence ran ("
                       + "; ".join(config_differences(exp, meta)) + ")")
    code = stale_code(meta)
    if code:
        shown = 3       # the files named, the others counted
        more = len(code) - shown
        reasons.append(
            "the code it ran changed since (" + ", ".join(
                f"`{path}`" for path in code[:shown])
            + (f" and {more} more file{'s' * (more > 1)}" if more > 0
               else "") + ")")
    if not reasons:
        return ""
    return (f" **Stale:** {'; '.join(reasons)}; `python -m "
            f"benchmark_utils.claims run {exp.name}` renews it.")


def recheck_text(meta):
    """The section's line for a recheck, else ""."""
    done = meta.get("rechecked")
    if not done:
        return ""
    return (f" Code rechecked at commit {done['commit'][:10]}"
            + (" with uncommitted changes" if done["uncommitted_changes"]
               else "") + f" ({done['date']}): the first "
            f"{done['repetitions']} repetition(s) of every entry rerun, "
            f"{done['rows']} stored rows the same, clocks aside "
            "(`claims recheck`).")
