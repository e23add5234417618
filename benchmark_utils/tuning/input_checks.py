"""The tuning command's checks of its input that need the file system or
the benchmark's classes, made before any run: a tuned config that cannot
be written, entries naming a dataset, solver or parameter the benchmark
does not have, a step that is not tunable, a bad ``max-runs`` and an
option given in both of benchopt's spellings (ValueError naming the file
and the way out)."""
import argparse
import os
from pathlib import Path

import yaml

from benchmark_utils.checks.names import closest
from benchmark_utils.checks.parameters import check_int
from benchmark_utils.checks.run_options import MAX_COUNT
from benchmark_utils.tuning import config_io
from benchmark_utils.tuning.grids import TUNABLE_PARAMETERS


def check_output(output):
    """ValueError before any run when the tuned config (and its score
    table next to it) cannot be written at ``output``: a directory there,
    a file where a folder of its path should be, or no write permission
    (missing folders are made when it is written)."""
    if output.is_dir():
        raise ValueError(f"--output must be a file path, got the "
                         f"directory {output}")
    existing = next(folder for folder in output.parents if folder.exists())
    if not existing.is_dir():
        raise ValueError(f"--output {output} cannot be written: {existing} "
                         "is a file, not a folder")
    if not os.access(existing, os.W_OK) or (
            output.exists() and not os.access(output, os.W_OK)):
        raise ValueError(f"--output {output} cannot be written: no write "
                         f"permission in {existing}")
    # permissions do not tell everything (/proc, a read-only mount): write
    # the file once, empty, and remove it unless it was there
    existed = output.exists()
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with open(output, "a"):
            pass
        if not existed:
            output.unlink()
    except OSError as error:
        raise ValueError(f"--output {output} cannot be written: "
                         f"{error.strerror or error}") from None


def check_entries(content, source):
    """ValueError before any run for a dataset or solver the benchmark
    does not have, or a parameter that one does not declare (the same
    message for both kinds)."""
    from benchmark_utils.tuning.defaults import benchmark
    classes = {"dataset": benchmark().get_datasets(),
               "solver": benchmark().get_solvers()}
    for kind, known in classes.items():
        by_name = {cls.name: cls for cls in known}
        for entry in config_io.as_list(content[kind]):
            name, params = config_io.parse_entry(entry)
            if name not in by_name:
                raise ValueError(
                    f"CONFIG {source}: no {kind} named {name!r}"
                    f"{closest(name, by_name)}; the benchmark's {kind}s are "
                    f"{sorted(by_name)}")
            message = unknown_parameters(kind, name, params,
                                         by_name[name].parameters)
            if message:
                raise ValueError(f"CONFIG {source}: {message}")


def unknown_parameters(kind, name, params, declared):
    """The message for the parameters of ``params`` that the ``kind``
    ``name`` does not declare (``declared``), the closest valid name of
    each; None where every one is declared."""
    unknown = sorted(set(params) - set(declared))
    if not unknown:
        return None
    named = ", ".join(f"{p}{closest(p, declared)}" for p in unknown)
    return (f"{kind} {name} has no parameter {named}; its parameters are "
            f"{sorted(declared)}")


def check_spellings(path):
    """ValueError where the config at ``path`` gives one option in both of
    benchopt's spellings (``max_runs`` and ``max-runs``): the tuning reads
    one, benchopt the other, so the two would disagree."""
    raw = yaml.safe_load(Path(path).read_text()) or {}
    spelled = {}
    for key in raw:
        spelled.setdefault(str(key).replace("_", "-"), []).append(key)
    for keys in spelled.values():
        if len(keys) > 1:
            raise ValueError(
                f"CONFIG {path} gives {keys[0]!r} and {keys[1]!r}, one "
                "option in benchopt's two spellings: keep one")


def tunable_parameter(name):
    """``name`` if the tuning can span it, else argparse's one-line error
    with the closest tunable name."""
    if name not in TUNABLE_PARAMETERS:
        raise argparse.ArgumentTypeError(
            f"{name!r} is not tunable{closest(name, TUNABLE_PARAMETERS)}; "
            f"the tunable steps and knobs are {sorted(TUNABLE_PARAMETERS)}")
    return name


def check_config_budget(path, max_runs):
    """The config's ``max-runs`` as an integer, or ValueError naming it:
    refused here, not by the first benchopt run of the tuning."""
    return check_int(f"CONFIG {path}: max-runs", max_runs, 1, MAX_COUNT)
