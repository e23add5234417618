"""Finite-sum quadratic bilevel problems with controlled spectra (general).

Lower level strongly convex quadratics whose mean Hessian has spectrum
exactly [mu, L], cross term of spectral norm ``cross_norm``, per-sample
noise of relative size ``noise``; upper level ``1/2 ||y - b_i||^2 +
upper_reg/2 ||x - a_i||^2``, so F is a strongly convex quadratic. X is
R^dim_x (``constraint="none"``), the l2 ball or the box [-radius,
radius]^dim_x. See ``benchmark_utils/problems/quadratic.py``.

``generator="benchmark_bilevel"`` builds instead benchopt's
benchmark_bilevel ``simulated`` quadratic
(``benchmark_utils/problems/simulated_quadratic.py``), with ``dim_x`` ->
dim_outer, ``dim_y`` -> dim_inner, ``n_samples`` -> both levels' sample
counts, ``mu`` -> mu_inner, ``L`` -> the four L_{inner,outer}_{inner,outer},
``cross_norm`` -> both L_cross; ``noise``, ``upper_reg`` and ``radius``
are unused and ``constraint`` must be "none". Upstream's default instance
is ``quadratic[generator=benchmark_bilevel,dim_x=100,dim_y=100,
n_samples=1024,mu=0.1,L=1.0,cross_norm=0.1,random_state=2442,
constraint=none]``. ``dtype`` ("float64", or "float32" as upstream) and
``random_source`` ("jax", "jax_legacy" or "numpy"; docs/problems.md)
apply to that generator only, and so does ``cache_means``: True (default)
computes each fixed block's means once and precomputes the full means
(exact, an oracle costs d^2); False averages the per-sample matrices at
every call, upstream's work (B d^2 a batch; docs/speed.md).
Offline: nothing is downloaded.
"""
from benchopt import BaseDataset

from benchmark_utils.checks.dataset_failures import CheckedDataset
from benchmark_utils.checks.memory import check_fits
from benchmark_utils.checks.parameters import check_choice
from benchmark_utils.checks.run_list import SampleCounts
from benchmark_utils.data.instance import instance_of
from benchmark_utils.problems.quadratic import (
    check_quadratic_parameters,
    make_quadratic_bilevel,
)
from benchmark_utils.problems.simulated_quadratic import (
    check_simulated_parameters,
    make_simulated_quadratic,
)
from benchmark_utils.references.cache_key import ReferenceIdentity
from benchmark_utils.references.quadratic import (
    quadratic_references,
    simulated_references,
)

GENERATORS = ("controlled", "benchmark_bilevel")


class Dataset(CheckedDataset, ReferenceIdentity, BaseDataset):
    name = "quadratic"
    requirements = ["pip::torch", "numpy", "cvxpy"]

    parameters = {
        "dim_x": [20],
        "dim_y": [20],
        "n_samples": [500],
        "mu": [0.5],
        "L": [5.0],
        "cross_norm": [1.0],
        "noise": [0.5],
        "upper_reg": [0.5],
        "constraint": ["none", "l2_ball", "box"],
        "radius": [1.0],
        "random_state": [0],
        "generator": ["controlled"],
        "dtype": ["float64"],
        "random_source": ["jax"],
        "cache_means": [True],
    }
    test_parameters = {"dim_x": [5], "dim_y": [4], "n_samples": [30],
                       "constraint": ["none", "l2_ball"]}

    def check_parameters(self):
        check_choice("generator", self.generator, GENERATORS)
        if self.generator == "controlled":
            check_choice("dtype", self.dtype, ("float64",))
            check_choice("random_source", self.random_source, ("jax",))
            check_choice("cache_means", self.cache_means, (True,))
            check_quadratic_parameters(**self._parameter_values())
            # per-sample rows: hess_diag, cross_left, d, b (dim_y each),
            # cross_right and a (dim_x each)
            check_fits("n_samples", self.n_samples,
                       self.n_samples * (4 * self.dim_y + 2 * self.dim_x))
            # the dense matrices: Q, H and H^-1 (dim_y x dim_y), C_mean
            # and J (dim_y x dim_x), the reference's A (dim_x x dim_x)
            dy, dx = self.dim_y, self.dim_x
            largest = "dim_y" if dy >= dx else "dim_x"
            check_fits(largest, max(dy, dx), 3 * dy * dy + 2 * dy * dx
                       + dx * dx)
            return
        if self.constraint != "none":
            raise ValueError(
                "generator='benchmark_bilevel' has no constraint: constraint "
                f"must be 'none', got {self.constraint!r} (select "
                "quadratic[generator=benchmark_bilevel,constraint=none])")
        check_choice("cache_means", self.cache_means, (True, False))
        check_simulated_parameters(**self._simulated_parameters())
        # per-sample Hessian and cross matrices of both levels
        dy, dx = self.dim_y, self.dim_x
        check_fits("n_samples", self.n_samples,
                   2 * self.n_samples * (dy * dy + dx * dy + dx * dx))

    def sample_counts(self):
        """Samples per level, from the parameters (run-list check)."""
        return SampleCounts("general", self.n_samples, self.n_samples)

    def make_data(self):
        if self.generator == "benchmark_bilevel":
            problem = make_simulated_quadratic(**self._simulated_parameters(),
                                               cache_means=self.cache_means)
            self.attach_references(problem, simulated_references(problem))
            return dict(problem=problem, instance=instance_of(self))
        params = self._parameter_values()
        problem = make_quadratic_bilevel(**params)
        self.attach_references(problem, quadratic_references(problem, params))
        return dict(problem=problem, instance=instance_of(self))

    def _parameter_values(self):
        """The controlled generator's parameters (its instances keep the
        reference-cache keys they had before ``generator`` existed)."""
        return {name: getattr(self, name) for name in self.parameters
                if name not in ("generator", "dtype", "random_source",
                                "cache_means")}

    def _simulated_parameters(self):
        """benchmark_bilevel's parameters, read from this dataset's."""
        return dict(
            n_samples_inner=self.n_samples, n_samples_outer=self.n_samples,
            dim_inner=self.dim_y, dim_outer=self.dim_x,
            L_inner_inner=self.L, L_inner_outer=self.L, mu_inner=self.mu,
            L_outer_inner=self.L, L_outer_outer=self.L,
            L_cross_inner=self.cross_norm, L_cross_outer=self.cross_norm,
            random_state=self.random_state, dtype=self.dtype,
            random_source=self.random_source)
