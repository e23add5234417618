"""The experiments behind docs/results.md: each is one tuned config
(configs/tuned/, written by the tuning command) run with its 10
repetitions on the evaluation seeds, its evidence in ``results/<name>/``.

``axis`` is the x-axis the paper plots (its claims are decided there and
also reported at equal samples); ``budget`` the point of the experiment's
own budget (``("iterations", K)`` or ``("samples", S)``) where its table
is read; ``stand_in`` says how an offline stand-in differs from the
paper's data, where it does. ``claims`` are the paper's, decided by
:mod:`benchmark_utils.claims.verdicts`.
"""
import dataclasses

from benchmark_utils.claims.verdicts import Claim, Method
from benchmark_utils.tuning.defaults import ROOT

RESULTS_DIR = ROOT / "results"


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    paper: str
    figure: str
    axis: str           # "iterations", "samples", "time" or an oracle
    budget: tuple = ()  # ("iterations" or "samples", value)
    methods: tuple = ()
    metrics: tuple = ()
    claims: tuple = ()
    stand_in: str = ""
    source: str = "tuned"   # "paper": the paper config's own steps;
    # "long": the tuned config run to ``budget``, a multiple of its own
    # (:func:`longer`), the run that backs "the budget" as a cause

    @property
    def base(self):
        """The experiment whose config this one runs (its name without
        ``_paper`` or ``_long``)."""
        return self.name.removesuffix("_paper").removesuffix("_long")

    @property
    def config(self):
        """The config run: the tuned one (of :attr:`base` for a longer
        run), or the paper config for the paper's steps."""
        if self.source == "paper":
            return ROOT / "configs" / f"{self.base}.yml"
        return ROOT / "configs" / "tuned" / f"{self.base}.yml"

    @property
    def folder(self):
        return RESULTS_DIR / self.name


def longer(exp, factor):
    """The ``NAME_long`` sibling of ``exp``: its tuned config run to
    ``factor`` times its sample budget (its claims, read there)."""
    kind, value = exp.budget
    if kind != "samples":
        raise ValueError(f"{exp.name}: a longer run needs a sample budget, "
                         f"not {kind}")
    return dataclasses.replace(
        exp, name=f"{exp.name}_long", source="long",
        budget=(kind, value * factor),
        figure=f"{exp.figure}, {factor}x the sample budget")


IBCG = Method("IBCG", ("IBCG[",))
SBFW_NEUMANN = Method("SBFW (Neumann, theory multipliers)",
                      ("SBFW[", "hessian_inverse=neumann", "delta_factor=1"))
SBFW_EXACT = Method("SBFW (exact inverse, theory multipliers)",
                    ("SBFW[", "hessian_inverse=exact", "delta_factor=1"))
SBFW_NEUMANN_X5 = Method("SBFW (Neumann, delta x5)",
                         ("SBFW[", "hessian_inverse=neumann",
                          "delta_factor=5"))
SBFW_EXACT_X5 = Method("SBFW (exact inverse, delta x5)",
                       ("SBFW[", "hessian_inverse=exact", "delta_factor=5"))
CORESET_METRICS = ("upper_gap_abs", "fw_gap", "inner_distance")
GENERAL_BASELINES = ("SOBA", "SRBA", "AmIGO", "BSA", "BOME", "F2SA",
                     "stocBiO", "MRBO", "VRBO", "FSLA", "SUSTAIN")


def _methods(names):
    return tuple(Method(name, (f"{name}[",)) for name in names)


SABA = Method("SABA", ("SABA[",))
SBCGI, SBCGF = Method("SBCGI", ("SBCGI[",)), Method("SBCGF", ("SBCGF[",))
AR_IP_SEG = Method("aR-IP-SeG", ("aR-IP-SeG[",))
DBGD_STO = Method("DBGD-sto (SDBGD)", ("SDBGD[",))


def _kwon_claims():
    """Kwon et al. 2023, Sec. 4 (Fig. 2): F2SA against SOBO (stocBiO) on
    the validation loss, per corruption rate and batch size."""
    claims = []
    for p in ("0.1", "0.3"):
        for batch in ("50", "500"):
            f2sa = Method(f"F2SA, batch {batch}",
                          ("F2SA[", f"batch_size={batch},"))
            sobo = Method(f"SOBO (stocBiO), batch {batch}",
                          ("stocBiO[", f"batch_size={batch},"))
            claims.append(Claim(
                f"F2SA is at least on par with SOBO (p = {p}, batch "
                f"{batch})", "value", f2sa, sobo, relation="on_par",
                dataset=f"corruption={p},"))
        claims.append(Claim(
            f"F2SA can be superior at the small batch 50 (p = {p})",
            "value", Method("F2SA, batch 50", ("F2SA[", "batch_size=50,")),
            Method("SOBO (stocBiO), batch 50",
                   ("stocBiO[", "batch_size=50,")),
            dataset=f"corruption={p},"))
    return tuple(claims)


def _kwon_methods():
    return tuple(Method(f"{label}, batch {b}", (f"{name}[",
                                                f"batch_size={b},"))
                 for name, label in (("F2SA", "F2SA"),
                                     ("stocBiO", "SOBO (stocBiO)"),
                                     ("Without-BO", "Without BO"))
                 for b in ("50", "500"))


def _cao_regression_claims():
    """Cao et al. 2023, Sec. 5 (regression), the claims of Figs. 1/3/5."""
    lower, upper = "lower_gap", "upper_gap_abs"
    return (
        *(Claim(f"SBCGF keeps the smallest lower-level gap (vs "
                f"{other.label})", lower, SBCGF, other)
          for other in (SBCGI, AR_IP_SEG, DBGD_STO)),
        *(Claim(f"SBCGF converges fastest in upper-level error (vs "
                f"{other.label})", upper, SBCGF, other)
          for other in (SBCGI, AR_IP_SEG, DBGD_STO)),
        *(Claim(f"SBCGI is second best on the {name} gap (vs "
                f"{other.label})", metric, SBCGI, other)
          for name, metric in (("lower", lower), ("upper", upper))
          for other in (AR_IP_SEG, DBGD_STO)),
        Claim("DBGD-sto does well on the upper level (vs aR-IP-SeG)", upper,
              DBGD_STO, AR_IP_SEG),
        Claim("DBGD-sto underperforms on the lower level (SBCGI below it)",
              lower, SBCGI, DBGD_STO),
    )


IR_SCG, IR_FSCG = _methods(("IR-SCG", "IR-FSCG"))


def _at(method, iteration, words):
    return Method(f"{method.label} {words}", method.parts, iteration)


def _giangtran_regression_claims(baselines=(AR_IP_SEG, DBGD_STO)):
    """Giang-Tran et al. 2025, Sec. 4.1 (Fig. 1 and its table);
    ``baselines``: the aR-IP-SeG and SDBGD entries."""
    lower, upper = "lower_gap", "upper_gap_abs"
    return (
        *(Claim(f"IR-FSCG reaches high-accuracy outer solutions with "
                f"strong inner feasibility, beating SBCGF ({name} gap)",
                metric, IR_FSCG, SBCGF)
          for name, metric in (("upper", upper), ("lower", lower))),
        *(Claim(f"IR-SCG beats SBCGI ({name} gap)", metric, IR_SCG, SBCGI)
          for name, metric in (("upper", upper), ("lower", lower))),
        *_worse_inner_gap_claims(),
        # "no significant progress on the outer objective": the start at
        # least on par with the point (not confirmed where it moved)
        *_no_progress_claims(baselines),
    )


def _worse_inner_gap_claims():
    """Giang-Tran et al. 2025, Secs. 4.1 and 4.2: "SBCGI and SBCGF show
    inner gaps that get worse over time": their first iterate after the
    warm start (iteration 1) below their value at the point."""
    return tuple(
        Claim(f"{m.label}'s inner gap gets worse over time (its first "
              f"iterate after the warm start below its value at the "
              f"point)", "lower_gap", _at(m, 1, "at iteration 1"), m)
        for m in (SBCGI, SBCGF))


def _no_progress_claims(methods):
    """Giang-Tran et al. 2025, Sec. 4.1: "aR-IP-SeG and SDBGD make no
    significant progress on the outer objective" (one key per baseline,
    whatever its step: the paper's short and long steps, or the tuned)."""
    return tuple(
        Claim(f"{m.label} makes no significant progress on the outer "
              f"objective (its start at least on par with the point)",
              "upper_gap_abs", _at(m, 0, "at its start"), m,
              relation="on_par", key=f"{m.parts[0]} no progress")
        for m in methods)


def _step(method, step, words):
    # "step" is the last of aR-IP-SeG's and SDBGD's parameters in
    # benchopt's (sorted) solver names
    return Method(f"{method.label} ({words} step)",
                  (*method.parts, f"step={step}]"))


GT_BASELINES_PAPER = (_step(AR_IP_SEG, "1e-07", "short"),
                      _step(AR_IP_SEG, "0.01", "long"),
                      _step(DBGD_STO, "1e-06", "short"),
                      _step(DBGD_STO, "0.01", "long"))


def _cao_dictionary_methods():
    """The four methods of Cao et al.'s Fig. 2 and the App. F.4 ablation:
    SBCGI-M / SBCGF-M (K0 = 0) and STORM-FW / SPIDER-FW (no cut)."""
    return tuple(
        Method(label, (f"{name}[{k0}", f"cut={cut}"))
        for name, variants in (("SBCGI", ("SBCGI", "SBCGI-M", "STORM-FW")),
                               ("SBCGF", ("SBCGF", "SBCGF-M", "SPIDER-FW")))
        for label, k0, cut in zip(variants, ("K0=0.01,", "K0=0,", ""),
                                  ("True", "True", "False"), strict=True))


def _cao_dictionary_claims():
    """Cao et al. 2023, Sec. 5 (Fig. 2) and App. F.4 (Fig. 7)."""
    sbcgi, sbcgi_m, storm, sbcgf, sbcgf_m, spider = _cao_dictionary_methods()
    lower, upper, recovery = "lower_gap", "upper_value", "recovery_rate"
    return (
        *(Claim(f"Fig. 2a: {a.label} converges faster on the lower level "
                f"than {b.label}", lower, a, b)
          for a, b in ((sbcgf, sbcgi), (sbcgf, AR_IP_SEG),
                       (sbcgf, DBGD_STO), (sbcgi, AR_IP_SEG),
                       (sbcgi, DBGD_STO))),
        *(Claim(f"Fig. 2{panel}: {a.label} does well on the {words}, "
                f"aR-IP-SeG is poor", metric, a, AR_IP_SEG,
                higher_is_better=metric == recovery)
          for panel, words, metric in (("b", "upper level", upper),
                                       ("c", "recovery rate", recovery))
          for a in (sbcgi, sbcgf, DBGD_STO)),
        *(Claim(f"Fig. 7a: {a.label} focuses more on the lower level than "
                f"{b.label}", lower, a, b)
          for a, b in ((sbcgi_m, sbcgi), (sbcgf_m, sbcgf))),
        *(Claim(f"Fig. 7: {b.label} gives a terrible {words} ({a.label} "
                f"better)", metric, a, b, higher_is_better=metric == recovery)
          for words, metric in (("lower-level gap", lower),
                                ("recovery rate", recovery))
          for a, b in ((sbcgi, storm), (sbcgf, spider))),
    )



def _giangtran_dictionary_claims(baselines):
    """Giang-Tran et al. 2025, Sec. 4.2 (Fig. 2: the inner gap and the
    outer objective F against time); ``baselines``: the aR-IP-SeG and
    SDBGD entries."""
    panels = (("inner gap", "lower_gap"), ("outer objective", "upper_value"))
    return (
        *(Claim(f"Fig. 2: {a.label} outperforms {b.label} ({name})", metric,
                a, b)
          for a in (IR_SCG, IR_FSCG) for b in baselines
          for name, metric in panels),
        *(Claim(f"Fig. 2: IR-FSCG reaches a better outer objective with "
                f"strong inner feasibility, beating SBCGF ({name})", metric,
                IR_FSCG, SBCGF) for name, metric in panels),
        *(Claim(f"Fig. 2: IR-SCG beats SBCGI ({name})", metric, IR_SCG,
                SBCGI) for name, metric in panels),
        *_worse_inner_gap_claims(),
    )

# the tuned config's SDBGD entries, its short and long steps (its two
# aR-IP-SeG entries were tuned to the same step: one solver)
GT_DICTIONARY_SDBGD = (_step(DBGD_STO, "0.005", "short"),
                       _step(DBGD_STO, "0.01", "long"))


def _biadams(name):
    """BiAdam or VR-BiAdam in the two readings of A_t (eq. (4) as
    written, from grad_x f; or from the hypergradient estimate)."""
    return tuple(Method(f"{name} (A_t from {words})",
                        (f"{name}[", f"adaptive_input={value}"))
                 for words, value in (("grad_x f", "grad_x_f"),
                                      ("the hypergradient", "hypergradient")))


BIADAMS, VR_BIADAMS = _biadams("BiAdam"), _biadams("VR-BiAdam")
HUANG_BASELINES = _methods(("stocBiO", "MRBO", "VRBO", "SUSTAIN", "FSLA",
                            "AID-CG", "AID-FP", "ITD"))


def _huang_hyper_cleaning_claims():
    """Huang et al. 2021, Sec. 5.1 (Fig. 1: the validation loss F
    against time), at each corruption rate rho: "BiAdam outperforms its
    non-adaptive counterparts such as stocBiO, MRBO and SUSTAIN; VR-BiAdam
    gets the best performance, where it outperforms VRBO" (each reading
    of A_t; VR-BiAdam against the paper's other methods and its BiAdam)."""
    stocbio, mrbo, _, sustain = HUANG_BASELINES[:4]
    claims = []
    for rho in ("0.2", "0.6", "0.8"):
        claims += [
            Claim(f"Fig. 1 (rho = {rho}): {a.label} outperforms "
                  f"{b.label}", "value", a, b, dataset=f"corruption={rho},")
            for a in BIADAMS for b in (stocbio, mrbo, sustain)]
        claims += [
            Claim(f"Fig. 1 (rho = {rho}): {a.label} gets the best "
                  f"performance (below {b.label})", "value", a, b,
                  dataset=f"corruption={rho},")
            for a, biadam in zip(VR_BIADAMS, BIADAMS, strict=True)
            for b in (*HUANG_BASELINES, biadam)]
    return tuple(claims)

MC_SBFW, MC_TTSA = _methods(("SBFW", "TTSA"))


def _matrix_completion_claims():
    """Abolfazli et al. 2023, Sec. 5.2 (Fig. 2)."""
    return tuple(
        Claim(f"Fig. 2: IBCG achieves a lower {words} than {other.label}",
              metric, IBCG, other)
        for words, metric in (("||grad_y g(x_k, y_k)||", "inner_grad_norm"),
                              ("normalized error", "normalized_error"),
                              ("f(x_k, y_k)", "upper_value_current"))
        for other in (MC_SBFW, MC_TTSA))


REGRESSION_STAND_IN = ("the synthetic regression of WikiMath's shape (1068 "
                       "x 500 Gaussian features, sparse truth) instead of "
                       "WikiMath")


def _giangtran_regression(name, figure, source="tuned",
                          baselines=(AR_IP_SEG, DBGD_STO)):
    """Giang-Tran et al.'s regression: tuned, or at the paper's steps
    (its short and long baseline steps, each an entry)."""
    return Experiment(
        name, "Giang-Tran et al. 2025", figure, "time",
        budget=("samples", 1_000_000), source=source,
        methods=(IR_SCG, IR_FSCG, SBCGI, SBCGF, *baselines),
        metrics=("lower_gap", "upper_gap_abs", "test_error"),
        claims=_giangtran_regression_claims(baselines),
        stand_in=REGRESSION_STAND_IN + "; SBCGI / SBCGF's cut by the exact "
                 "cut-LMO, not CVXPY")


EXPERIMENTS = {e.name: e for e in (
    Experiment(
        "abolfazli2023_coreset_fig1_paper", "Abolfazli et al. 2023",
        "§5.1, Fig. 1 (mu_g = 1, K = 100), the theory's steps",
        "iterations", budget=("iterations", 100), source="paper",
        methods=(IBCG, Method("SBFW (Neumann)", ("SBFW[",))),
        metrics=CORESET_METRICS,
        claims=(Claim("Fig. 1: IBCG converges to the optimum while SBFW "
                      "fails to converge (upper gap at K = 100)",
                      "upper_gap_abs", IBCG,
                      Method("SBFW (Neumann)", ("SBFW[",))),)),
    Experiment(
        "abolfazli2023_coreset_paper", "Abolfazli et al. 2023",
        "§5.1, Figs. 3-4 (mu_g = 0.1, K = 1000), the paper's steps",
        "iterations", budget=("iterations", 1000), source="paper",
        methods=(IBCG, SBFW_NEUMANN, SBFW_EXACT, SBFW_NEUMANN_X5,
                 SBFW_EXACT_X5),
        metrics=CORESET_METRICS,
        claims=(
            Claim("Fig. 3: even with the exact Hessian inverse SBFW fails "
                  "to converge at the theory's steps (IBCG below it)",
                  "upper_gap_abs", IBCG, SBFW_EXACT),
            Claim("Fig. 3: IBCG below the Neumann SBFW", "upper_gap_abs",
                  IBCG, SBFW_NEUMANN),
            Claim("Fig. 4: with delta x5, eta x0.1 the exact-inverse SBFW "
                  "converges (below its theory steps)", "upper_gap_abs",
                  SBFW_EXACT_X5, SBFW_EXACT),
        )),
    Experiment(
        "abolfazli2023_coreset_fig1", "Abolfazli et al. 2023",
        "§5.1, Fig. 1 (mu_g = 1, K = 100)", "iterations",
        budget=("iterations", 100),
        methods=(IBCG, Method("SBFW (Neumann)", ("SBFW[",))),
        metrics=CORESET_METRICS,
        claims=(Claim("tuned steps: IBCG below SBFW (upper gap at K = 100)",
                      "upper_gap_abs", IBCG,
                      Method("SBFW (Neumann)", ("SBFW[",))),)),
    Experiment(
        "abolfazli2023_coreset", "Abolfazli et al. 2023",
        "§5.1, Figs. 3-4 (mu_g = 0.1, K = 1000)", "iterations",
        budget=("iterations", 1000),
        methods=(IBCG, SBFW_NEUMANN, SBFW_EXACT, SBFW_NEUMANN_X5,
                 SBFW_EXACT_X5),
        metrics=CORESET_METRICS,
        claims=(
            Claim("tuned steps: IBCG below the exact-inverse SBFW",
                  "upper_gap_abs", IBCG, SBFW_EXACT),
            Claim("tuned steps: IBCG below the Neumann SBFW",
                  "upper_gap_abs", IBCG, SBFW_NEUMANN),
        )),
    Experiment(
        "abolfazli2023_matrix_completion_n100", "Abolfazli et al. 2023",
        "§5.2, Fig. 2, matrix completion (n = 100)", "time",
        budget=("iterations", 10_000),
        methods=(IBCG, MC_SBFW, MC_TTSA),
        metrics=("inner_grad_norm", "normalized_error",
                 "upper_value_current", "fw_gap"),
        claims=_matrix_completion_claims(),
        stand_in="the paper's problem at n = 100 instead of 250 (7990 "
                 "observed entries instead of 50131), so that the paper's "
                 "10^4 iterations fit; SBFW ends at the paper's 200 s "
                 "before them"),
    Experiment(
        "cao2023_dictionary", "Cao et al. 2023",
        "Fig. 2 and App. F.4 (Fig. 7), dictionary learning", "samples",
        budget=("samples", 200_000),
        methods=(*_cao_dictionary_methods(), AR_IP_SEG, DBGD_STO),
        metrics=("lower_gap", "upper_value", "recovery_rate"),
        claims=_cao_dictionary_claims()),
    Experiment(
        "cao2023_regression_synthetic", "Cao et al. 2023",
        "Figs. 1/3/5, regression", "samples",
        budget=("samples", 1_000_000),
        methods=(SBCGF, SBCGI, AR_IP_SEG, DBGD_STO),
        metrics=("lower_gap", "upper_gap_abs", "test_error"),
        claims=_cao_regression_claims(),
        stand_in=REGRESSION_STAND_IN),
    _giangtran_regression("giangtran2025_regression_synthetic",
                          "§4.1, Fig. 1, regression"),
    _giangtran_regression("giangtran2025_regression_synthetic_paper",
                          "§4.1, Fig. 1, regression, the paper's steps",
                          "paper", GT_BASELINES_PAPER),
    Experiment(
        "kwon2023_hyper_cleaning_digits", "Kwon et al. 2023",
        "Fig. 2, data hyper-cleaning", "samples",
        budget=("samples", 5_000_000), methods=_kwon_methods(),
        metrics=("value", "test_accuracy", "cleaning_auc"),
        claims=_kwon_claims(),
        stand_in="scikit-learn's 8 x 8 digits, 1000 noisy training / 500 "
                 "clean validation images (the paper: MNIST, 19000 / "
                 "1000, a 19:1 ratio here 2:1)"),
    Experiment(
        "giangtran2025_dictionary_exact_lmo", "Giang-Tran et al. 2025",
        "§4.2, Fig. 2, dictionary learning (the exact cut-LMO)", "time",
        budget=("samples", 200_000),
        methods=(IR_SCG, IR_FSCG, SBCGI, SBCGF, AR_IP_SEG,
                 *GT_DICTIONARY_SDBGD),
        metrics=("lower_gap", "upper_value", "recovery_rate"),
        claims=_giangtran_dictionary_claims((AR_IP_SEG,
                                             *GT_DICTIONARY_SDBGD))),
    Experiment(
        "huang2021_hyper_cleaning_digits", "Huang et al. 2021",
        "§5.1, Fig. 1, data hyper-cleaning", "time",
        budget=("samples", 1_000_000),
        methods=(*BIADAMS, *VR_BIADAMS, *HUANG_BASELINES,
                 *_methods(("F2SA", "SOBA"))),
        metrics=("value", "test_accuracy", "cleaning_auc"),
        claims=_huang_hyper_cleaning_claims(),
        stand_in="scikit-learn's 8 x 8 digits, 800 training / 800 "
                 "validation images (the paper: MNIST, 5000 / 5000), "
                 "VRBO's large batch the whole training set as there"),
    Experiment(
        "benchmark_bilevel_simulated", "Dagréou et al. 2022",
        "benchmark_bilevel's simulated quadratic", "samples",
        budget=("samples", 1_000_000),
        methods=(SABA, *_methods(GENERAL_BASELINES), Method("TTSA",
                                                            ("TTSA[",))),
        metrics=("upper_gap_abs", "inner_distance")),
    Experiment(
        "benchmark_bilevel_regularization_synthetic", "Dagréou et al. 2022",
        "Fig. 2 left, regularization selection", "time",
        budget=("samples", 1_000_000),
        methods=(SABA, *_methods(GENERAL_BASELINES),
                 *_methods(("PZOBO", "Optuna"))),
        metrics=("value", "test_accuracy"),
        claims=tuple(
            Claim("Fig. 2 left: SABA reaches a lower validation loss than "
                  f"{other.label}", "value", SABA, other)
            for other in (*_methods(GENERAL_BASELINES),
                          *_methods(("PZOBO", "Optuna")))),
        stand_in="ijcnn1's shape (22 features, 1000 / 1000 / 1000 "
                 "samples), synthetic Gaussian features instead of "
                 "ijcnn1's 49,990 training samples"),
)}

# the longer runs that can back "the budget" (sections.cause): the tuned
# config at 10x its sample budget
EXPERIMENTS.update({e.name: e for e in (
    longer(EXPERIMENTS[name], 10) for name in (
        "benchmark_bilevel_regularization_synthetic",
        "kwon2023_hyper_cleaning_digits", "cao2023_dictionary"))})


def experiment(name):
    """The :class:`Experiment` called ``name``; ValueError listing the
    experiments otherwise."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; the experiments "
                         f"are {', '.join(sorted(EXPERIMENTS))}")
    return EXPERIMENTS[name]
