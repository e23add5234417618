"""One resolution of every step a solver runs with, each with its source.

A solver declares its steps once, as a tuple of :class:`StepRule` (the
class attribute ``step_rules``): the name (a parameter, or a quantity
derived from others), the paper's letter, the role and the default rule
in words and as a function. :func:`resolve_steps` turns the parameters as
given, the problem's declared constants and the run's tuned table into a
frozen :class:`Steps`, in declaration order (a rule may read the steps
declared before it). It is the only place a step's value is decided; the
solver's loop reads ``self.steps`` and nothing else, and every value with
its source lands in the result file (:meth:`Steps.record`).

Sources (the ``resolved_<name>_source`` column):

* ``given``: the parameter as the user gave it;
* ``tuned: <file>``: the run's tuned table (a plain run on a default
  instance, ``configs/tuned/default_<dataset>.yml``);
* ``default: <rule>``: the declared default rule on this problem;
* ``derived: <rule>``: a quantity that is no parameter, computed from the
  steps before it.
"""
import dataclasses
import math
import numbers
import textwrap
from collections.abc import Mapping
from types import MappingProxyType

SOURCES = ("given", "tuned", "default", "derived")
# the problem constants a default rule may read (StepRule.needs)
PROBLEM_CONSTANTS = ("mu_g", "L_g")
# the source of a size a schedule set, recorded at the run's last iteration
# (BilevelSolver.schedule_sizes); a rerun that ends elsewhere records another
SCHEDULE_SOURCE = "schedule:"
RECORD_PREFIX = "resolved_"


@dataclasses.dataclass(frozen=True)
class StepRule:
    """One step (or schedule constant) of a solver.

    ``default(solver, problem, steps)`` computes the default from the
    solver's other parameters, the problem's declared constants and the
    ``steps`` resolved before it (a read-only mapping of floats).
    ``parameter`` False: a derived quantity, never given nor tuned.
    ``positive`` False: the value may be any finite number (an exponent).
    ``parameter_default``: the parameter's value in benchopt's
    ``parameters`` (None: the rule decides), which the solver's base class
    writes there (:func:`step_parameters`): a step is declared once.
    ``needs``: the problem's declared constants the default reads
    (``("mu_g", "L_g")``); a problem that leaves one None is skipped unless
    the step is given (GeneralBilevelSolver.skip_problem).
    """

    name: str
    letter: str
    role: str
    rule: str
    default: object
    parameter: bool = True
    positive: bool = True
    # where ``rule`` names several branches: the branch that applies to a
    # solver, in words (the source then names the one that ran)
    branch: object = None
    parameter_default: object = None
    needs: tuple = ()

    def __post_init__(self):
        unknown = set(self.needs) - set(PROBLEM_CONSTANTS)
        if unknown:
            raise ValueError(f"{self.name}'s rule needs {sorted(unknown)}: "
                             f"a rule reads only {PROBLEM_CONSTANTS}")

    def rule_for(self, solver):
        """The rule in words as it applies to ``solver``."""
        return self.rule if self.branch is None else self.branch(solver)


def step_parameters(rules):
    """benchopt's ``parameters`` entries of the steps declared by
    ``rules``: ``{name: [parameter_default]}`` for each one that is a
    parameter, in declaration order."""
    return {rule.name: [rule.parameter_default] for rule in rules
            if rule.parameter}


DEFAULTS_HEADING = ("Defaults (generated from ``step_rules``, "
                    "``size_rules`` and ``parameters``):")


def defaults_paragraph(rules, parameters, sizes=()):
    """The docstring paragraph of a solver's defaults, written from its
    declarations (``rules``: its ``step_rules``; ``parameters``: benchopt's
    ``parameters``; ``sizes``: its ``size_rules``): each step with its
    letter and default rule (or its number), each size's rule, then every
    other parameter's default, one item each. The base class appends it to
    each solver's docstring, so no default is written twice."""
    items = []
    for rule in rules:
        if rule.parameter_default is not None:
            default = f" = {rule.parameter_default!r}"
        else:
            default = (": " if rule.parameter else ": derived, ") + rule.rule
        items.append(f"``{rule.name}`` ({rule.letter}){default}")
    for size in sizes:
        if size.given:
            items.append(f"``{size.name}`` (a size) = "
                         f"{size.parameter_default!r}")
            continue
        given = "" if size.parameter in (None, size.name) else (
            f", ``{size.parameter}`` where given")
        items.append(f"``{size.name}`` (a size): {size.rule}{given}")
    named = {rule.name for rule in rules} | {
        size.parameter or size.name for size in sizes}
    items += [f"``{name}`` = {values[0]!r}"
              for name, values in parameters.items() if name not in named]
    lines = [DEFAULTS_HEADING, ""]
    for item in items:
        lines += textwrap.wrap("* " + item, 79, subsequent_indent="  ",
                               break_long_words=False,
                               break_on_hyphens=False)
    return "\n".join(lines)


def written_doc(doc):
    """A solver's docstring as its file writes it: without the generated
    paragraph of :func:`defaults_paragraph`."""
    return doc.split(DEFAULTS_HEADING)[0].rstrip()


def constant_rule(name, letter, role, value, why=""):
    """The rule of a step whose default is the number ``value`` (a value
    tuned or chosen once, ``why`` says where it comes from)."""
    return StepRule(name, letter, role,
                    f"{value:g}" + (f", {why}" if why else ""),
                    lambda solver, problem, steps: value)


def given_step(name, letter, role, value, positive=True):
    """The rule of a step or schedule constant whose parameter defaults to
    the number ``value`` (the paper's) rather than to None: it is declared
    so that the run reads and records it (source ``given``); it has no
    default rule, so None is refused (pass a number). ``positive`` False:
    any finite number (the solver's ``check_parameters`` checks its
    range)."""
    return StepRule(name, letter, role, "none: the parameter's number",
                    lambda solver, problem, steps: None,
                    parameter_default=value, positive=positive)


def method_rule(name, letter, role, rule, method):
    """The rule of a step whose default the solver's method ``method``
    computes from its other parameters (e.g. a theorem's smallest
    offset)."""
    return StepRule(name, letter, role, rule,
                    lambda solver, problem, steps: getattr(solver, method)())


@dataclasses.dataclass(frozen=True)
class ResolvedStep:
    """A step's value and where it came from (see the module doc)."""

    value: float
    source: str

    @property
    def kind(self):
        """``given``, ``tuned``, ``default`` or ``derived``."""
        return self.source.split(":")[0]


class Steps(Mapping):
    """The frozen result of :func:`resolve_steps`: ``steps.outer_step`` is
    the value, ``steps["outer_step"]`` the :class:`ResolvedStep`."""

    def __init__(self, resolved):
        object.__setattr__(self, "_resolved",
                           MappingProxyType(dict(resolved)))

    def __getitem__(self, name):
        return self._resolved[name]

    def __iter__(self):
        return iter(self._resolved)

    def __len__(self):
        return len(self._resolved)

    def __getattr__(self, name):
        try:
            return self._resolved[name].value
        except KeyError:
            raise AttributeError(f"no resolved step {name!r}; resolved: "
                                 f"{', '.join(self._resolved)}") from None

    def __setattr__(self, name, value):
        raise AttributeError("resolved steps are frozen")

    def values(self):
        return {name: step.value for name, step in self._resolved.items()}

    def record(self):
        """``{resolved_<name>: value, resolved_<name>_source: source}``:
        the result file's columns (``objective_resolved_*``)."""
        row = {}
        for name, step in self._resolved.items():
            row[RECORD_PREFIX + name] = float(step.value)
            row[RECORD_PREFIX + name + "_source"] = step.source
        return row

    def given(self):
        """The parameters that rerun this curve with explicit numbers:
        every resolved step that is a parameter, at its value."""
        return {name: step.value for name, step in self._resolved.items()
                if step.kind != "derived"}


@dataclasses.dataclass(frozen=True)
class TunedTable:
    """The steps tuned on one instance, ``{solver name: {step: value}}``,
    read from ``source`` (a tuned config): the run layer's table
    (objective.py), handed to each solver with its problem."""

    source: str
    entries: Mapping

    def entry_for(self, solver):
        """The solver's tuned steps, where it is at the tuned point: given
        none of the tuned steps and every other parameter at its default
        (the point that was tuned); else none."""
        tuned = self.entries.get(solver.name, {})
        at_tuned_point = all(
            getattr(solver, name) is None if name in tuned
            else getattr(solver, name) == values[0]
            for name, values in solver.parameters.items())
        return dict(tuned) if at_tuned_point else {}


NO_TUNED_TABLE = TunedTable("", MappingProxyType({}))


def resolve_steps(rules, solver, problem, tuned=None, tuned_from=""):
    """The :class:`Steps` of ``solver`` on ``problem``.

    ``rules``: the solver's ``step_rules``; a rule that is a parameter
    reads its given value on ``solver`` (None: not given). ``tuned``:
    ``{name: value}`` of the run's tuned table for this solver (used for a
    step not given), ``tuned_from`` the table's file. Pure: sets nothing on
    the solver or the problem; ValueError for a default that is not a
    finite number > 0 (naming the step and its rule).
    """
    tuned = tuned or {}
    resolved = {}
    for rule in rules:
        given = getattr(solver, rule.name, None) if rule.parameter else None
        if given is not None:
            step = ResolvedStep(_number(rule, given, "given"), "given")
        elif rule.parameter and rule.name in tuned:
            step = ResolvedStep(_number(rule, tuned[rule.name], "tuned"),
                                f"tuned: {tuned_from}")
        else:
            view = MappingProxyType(
                {name: s.value for name, s in resolved.items()})
            value = rule.default(solver, problem, view)
            kind = "default" if rule.parameter else "derived"
            step = ResolvedStep(_number(rule, value, kind),
                                f"{kind}: {rule.rule_for(solver)}")
        resolved[rule.name] = step
    return Steps(resolved)


# the largest size a solver takes (a loop's length, a batch, a period, a
# horizon): a larger loop makes one iteration outlast a run's time cap
# (benchopt reads its timeout only between evaluations), and a value past
# int64 fails benchopt's save of every finished run
MAX_SIZE = 10**6
MAX_SIZE_REASON = ("a larger size would outlast a run's time cap or "
                   "overflow its result file")


@dataclasses.dataclass(frozen=True)
class SizeRule:
    """One integer size of a solver that is no step (a batch size, a
    period, a number of inner steps): ``default(solver, problem, sizes)``
    computes the default (an int, or None for a full pass) from the
    solver's parameters, the problem's sample counts and the ``sizes``
    resolved before it; the parameter ``parameter`` (None: ``name``)
    overrides it where given. ``given``: a size with no default rule
    (``default`` None), the parameter's number (:func:`given_size`);
    ``none_means``: what a None value means, in its recorded source.
    ``parameter_default``: the parameter's value in benchopt's
    ``parameters``, which the solver's base class writes there
    (:func:`size_parameters`): a size is declared once."""

    name: str
    rule: str
    default: object
    parameter: str = None
    parameter_default: object = None
    given: bool = False
    none_means: str = "a full pass"


def given_size(name, value, none_means="a full pass"):
    """The rule of a size whose parameter defaults to the number ``value``
    (None, where the solver allows it: ``none_means``): declared so that
    the run reads and records it (source ``given``); its range is checked
    by the solver's ``check_parameters``."""
    return SizeRule(name, "the parameter's number", None,
                    parameter_default=value, given=True,
                    none_means=none_means)


def with_parameter_defaults(rules, **values):
    """``rules`` (step or size rules) with the parameter default of each
    one named in ``values`` replaced: a subclass that changes a default
    replaces its base's rule, never writes the entry again."""
    return tuple(dataclasses.replace(rule, parameter_default=values[
        rule.name]) if rule.name in values else rule for rule in rules)


def size_parameters(rules):
    """benchopt's ``parameters`` entries of the sizes declared by
    ``rules``: ``{parameter: [parameter_default]}``, in declaration order
    (rules that share a parameter give one entry)."""
    return {rule.parameter or rule.name: [rule.parameter_default]
            for rule in rules}


def resolve_sizes(rules, solver, problem):
    """The sizes of ``solver`` on ``problem`` (a problem, or the run-list
    check's sample counts) by its ``size_rules``, in declaration order: a
    frozen :class:`Steps` of int (None: a full pass) values with their
    sources. Pure, as :func:`resolve_steps`."""
    resolved = {}
    for rule in rules:
        given = getattr(solver, rule.parameter or rule.name, None)
        if given is not None or rule.given:
            resolved[rule.name] = (
                ResolvedStep(None, f"given: None, {rule.none_means}")
                if given is None else ResolvedStep(int(given), "given"))
            continue
        value = rule.default(solver, problem, MappingProxyType(
            {name: size.value for name, size in resolved.items()}))
        resolved[rule.name] = (
            ResolvedStep(None, f"default: {rule.rule}, None: "
                               f"{rule.none_means}")
            if value is None else
            ResolvedStep(int(value), f"default: {rule.rule}"))
    return Steps(resolved)


def size_record(sizes):
    """``{resolved_<name>: value, resolved_<name>_source: source}`` of
    ``{name: ResolvedStep}`` sizes (None: a full pass), as
    :meth:`Steps.record` for steps."""
    row = {}
    for name, size in sizes.items():
        row[RECORD_PREFIX + name] = size.value
        row[RECORD_PREFIX + name + "_source"] = size.source
    return row


def _number(rule, value, kind):
    """``value`` as a float, checked finite (and > 0 unless the rule says
    otherwise); the message names the step and where the value came from."""
    need = "a finite number > 0" if rule.positive else "a finite number"
    if (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value) and (value > 0 or not rule.positive)):
        return float(value)
    if kind == "given":
        raise ValueError(f"{rule.name} must be {need}, got {value!r}")
    if kind == "tuned":
        raise ValueError(f"{rule.name} of the tuned table must be {need}, "
                         f"got {value!r}")
    raise ValueError(f"{rule.name}'s {kind} rule ({rule.rule}) gives "
                     f"{value!r} on this problem, not {need}; pass "
                     f"{rule.name} explicitly")
