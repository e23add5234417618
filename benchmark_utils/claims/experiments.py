"""The experiments behind docs/results.md: each is one tuned config
(configs/tuned/, written by the tuning command) run with its 10
repetitions on the evaluation seeds, its evidence in ``results/<name>/``.

``axis`` is the x-axis the paper plots (its claims are decided there and
also reported at equal samples); ``stand_in`` says how an offline stand-in
differs from the paper's data, where it does.
"""
import dataclasses

from benchmark_utils.tuning.defaults import ROOT

RESULTS_DIR = ROOT / "results"


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    paper: str
    figure: str
    axis: str           # "iterations", "samples", "time" or an oracle
    stand_in: str = ""

    @property
    def config(self):
        return ROOT / "configs" / "tuned" / f"{self.name}.yml"

    @property
    def folder(self):
        return RESULTS_DIR / self.name


EXPERIMENTS = {e.name: e for e in (
    Experiment("abolfazli2023_coreset_fig1", "Abolfazli et al. 2023",
               "§5.1, Fig. 1 (mu_g = 1, K = 100)", "iterations"),
    Experiment("abolfazli2023_coreset", "Abolfazli et al. 2023",
               "§5.1, Figs. 3-4 (mu_g = 0.1, K = 1000)", "iterations"),
    Experiment("benchmark_bilevel_simulated", "Dagréou et al. 2022",
               "benchmark_bilevel's simulated quadratic", "samples"),
    Experiment("benchmark_bilevel_regularization_synthetic",
               "Dagréou et al. 2022", "Fig. 2 left, regularization "
               "selection", "time", stand_in="ijcnn1's shape (22 features, "
               "1000 / 1000 / 1000 samples), synthetic Gaussian features "
               "instead of ijcnn1's 49,990 training samples"),
)}


def experiment(name):
    """The :class:`Experiment` called ``name``; ValueError listing the
    experiments otherwise."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; the experiments "
                         f"are {', '.join(sorted(EXPERIMENTS))}")
    return EXPERIMENTS[name]
