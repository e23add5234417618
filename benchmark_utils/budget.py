"""The budget of a plain ``benchopt run .``, chosen by this benchmark and
said on the run's first line.

benchopt's own defaults (100 evaluations, 100 s per run) would make the
default grid take hours. A ``benchopt run`` given neither ``--max-runs``
nor a time limit (``--timeout``, ``--no-timeout``), on its command line or
in its ``--config`` file, gets :data:`FIRST_CONTACT_MAX_RUNS` evaluations
(the last at iteration 316: benchopt's callback evaluates at 0, 1, 2, 3,
4, 6, 9, ..., 211, 316), a budget in iterations, so what the run shows
does not depend on the machine's load, with a cap of
:data:`FIRST_CONTACT_TIMEOUT` seconds per run only as a guard against a
hang (every default run ends at its iteration budget well before: the
slowest took 16 s on a quiet 2-core machine, 2026-11-26). Whatever is
given is honoured as given, benchopt's default values included
(``--max-runs 100 --timeout 100``).

Which options were given is read with click's public API (the parameter
source of the run command's options, and the config file's keys), in the
process that runs the command; :func:`announce` records the choice in the
environment, so worker processes started later (``-j``) apply it too.
"""
import os
import sys

import click
import yaml

FIRST_CONTACT_MAX_RUNS = 15
FIRST_CONTACT_TIMEOUT = 300
# the choice, for this process and the workers it starts: "max_runs,timeout"
# with an empty field where the run's own value stands
ENVIRONMENT_KEY = "BILEVEL_BENCHMARK_CHOSEN_BUDGET"
# the run's options and the config file's keys that set each budget
BUDGET_OPTIONS = {"max_runs": ("max_runs", ("max-runs", "max_runs")),
                  "timeout": ("timeout", ("timeout", "no-timeout",
                                          "no_timeout"))}


def given_budget(context):
    """``{"max_runs": bool, "timeout": bool}``: whether the run command of
    ``context`` was given each budget (command line or config file)."""
    config = {}
    config_file = context.params.get("config_file")
    if config_file is not None:
        with open(config_file) as stream:
            config = yaml.safe_load(stream) or {}
    given = {}
    for budget, (option, keys) in BUDGET_OPTIONS.items():
        sources = [context.get_parameter_source(option)]
        if budget == "timeout":
            sources.append(context.get_parameter_source("no_timeout"))
        on_command_line = any(
            source is not None and source.name != "DEFAULT"
            for source in sources)
        given[budget] = on_command_line or any(key in config for key in keys)
    return given


def announce():
    """In a ``benchopt run`` given no budget: choose the first-contact
    budget, say so on stderr (what was chosen and how to ask for benchopt's
    defaults) and record it for :func:`chosen`. Nothing elsewhere."""
    context = click.get_current_context(silent=True)
    if context is None or context.command.name != "run":
        return
    if context.meta.get("bilevel_budget_announced"):
        return
    context.meta["bilevel_budget_announced"] = True
    given = given_budget(context)
    max_runs = "" if given["max_runs"] else str(FIRST_CONTACT_MAX_RUNS)
    timeout = "" if given["timeout"] else str(FIRST_CONTACT_TIMEOUT)
    os.environ[ENVIRONMENT_KEY] = f"{max_runs},{timeout}"
    said = []
    if max_runs:
        said.append(f"{max_runs} evaluations per run (316 iterations)")
    if timeout:
        said.append(f"a {timeout} s cap per run against hangs")
    if said:
        missing = ("none was given" if len(said) == 2 else
                   "no --max-runs was given" if max_runs else
                   "no --timeout was given")
        print(f"\nBudget chosen by this benchmark, as {missing}: "
              f"{' and '.join(said)}. For benchopt's defaults, pass them "
              "explicitly: --max-runs 100 --timeout 100.",
              file=sys.stderr, flush=True)


def cache_key():
    """The announced choice as it enters benchopt's result cache (the
    objective's pickled state): a run under the chosen budget and one given
    the same numbers as benchopt's defaults (``-n 100``) are different runs,
    and neither is served the other's cached curve."""
    return os.environ.get(ENVIRONMENT_KEY, "")


def chosen(max_runs, timeout):
    """(max_runs, timeout) a run gets: the announced choice where there is
    one, else the values benchopt passed."""
    recorded = os.environ.get(ENVIRONMENT_KEY)
    if not recorded:
        return max_runs, timeout
    chosen_runs, chosen_timeout = recorded.split(",")
    return (int(chosen_runs) if chosen_runs else max_runs,
            int(chosen_timeout) if chosen_timeout else timeout)
