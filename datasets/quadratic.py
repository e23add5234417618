"""Finite-sum quadratic bilevel problems with controlled spectra (general).

Lower level strongly convex quadratics whose mean Hessian has spectrum
exactly [mu, L], cross term of spectral norm ``cross_norm``, per-sample noise
of relative size ``noise``; upper level ``1/2 ||y - b_i||^2 + upper_reg/2
||x - a_i||^2``, so F is a strongly convex quadratic with known minimizer.
X is R^dim_x (``constraint="none"``), the l2 ball or the box
[-radius, radius]^dim_x. See ``benchmark_utils/problems/quadratic.py`` for
the generator and every choice made, and
``benchmark_utils/references/quadratic.py`` for how F* is certified.

Offline: everything is generated, nothing is downloaded.
"""
from benchopt import BaseDataset

from benchmark_utils.problems.quadratic import (make_quadratic_bilevel,
                                                validate_quadratic_parameters)
from benchmark_utils.references.identity import ReferenceIdentity
from benchmark_utils.references.quadratic import quadratic_references
from benchmark_utils.run_validation import CheckedParameters


class Dataset(CheckedParameters, ReferenceIdentity, BaseDataset):
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
    }
    test_parameters = {"dim_x": [5], "dim_y": [4], "n_samples": [30],
                       "constraint": ["none", "l2_ball"]}

    def check_parameters(self):
        validate_quadratic_parameters(**self._parameter_values())

    def get_data(self):
        params = self._parameter_values()
        problem = make_quadratic_bilevel(**params)
        self.attach_references(problem, quadratic_references(problem, params))
        return dict(problem=problem)

    def _parameter_values(self):
        return {name: getattr(self, name) for name in self.parameters}
