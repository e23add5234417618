import dataclasses

import torch

from benchmark_utils.solvers.biadam_family import BiAdamFamilySolver
from benchmark_utils.solvers.schedules import (
    double_momentum_min_offset,
    double_momentum_schedule,
)


class Solver(BiAdamFamilySolver):
    """VR-BiAdam: adaptive bilevel optimization with STORM-type estimators.

    Huang, Li, Gao, Huang, "BiAdam: Fast Adaptive Bilevel Optimization
    Methods", arXiv 2106.11396, 2021, Algorithm 2: BiAdam (lines 4-7, the
    steps and the parameters: see ``solvers/biadam.py``) with

    * lines 8-9 (STORM, Cutkosky & Orabona 2019), on iteration t's batches
      and depth k_t at both points: w_t = h(x_t, y_t) + (1 - beta_t)
      [w_{t-1} - h(x_{t-1}, y_{t-1})], v_t = grad_y g(x_t, y_t; zeta_t)
      + (1 - alpha_t) [v_{t-1} - grad_y g(x_{t-1}, y_{t-1}; zeta_t)];
    * Theorem 2: eta_t = k/(m + t)^{1/3}, alpha_{t+1} = c1 eta_t^2,
      beta_{t+1} = c2 eta_t^2, m >= max{2, k^3, (c1 k)^3, (c2 k)^3}.

    Departures (besides BiAdam's): the v update of line 8 is lost in the
    paper's text; the STORM form above is the one its Lemma 12 bounds. The
    depth k_t is shared by the two points (the paper is silent; its
    Lemma 4 holds on one sample set only).

    The step rules are BiAdam's, m's the smallest Theorem 2 allows; c2
    is below BiAdam's, a heavier averaging of w. See docs/solvers.md.
    """

    name = "VR-BiAdam"
    parameters = BiAdamFamilySolver.parameters
    step_rules = tuple(
        dataclasses.replace(rule, **{
            # Theorem 2's weights are c times eta_t squared
            "c1": {"role": "alpha_{t+1} over eta_t^2"},
            "c2": {"parameter_default": 0.3,
                   "role": "beta_{t+1} over eta_t^2"},
            "step_offset": {
                "rule": "Theorem 2's max{2, k^3, (c1 k)^3, (c2 k)^3}"},
        }.get(rule.name, {})) for rule in BiAdamFamilySolver.step_rules)

    def smallest_step_offset(self):
        """Theorem 2's max{2, k^3, (c1 k)^3, (c2 k)^3}."""
        return double_momentum_min_offset(self.step_scale, self.c1, self.c2)

    def schedule(self, t):
        """(eta_t, alpha_{t+1}, beta_{t+1}) of Theorem 2."""
        return double_momentum_schedule(t, scale=self.steps.step_scale,
                                        offset=self.steps.step_offset,
                                        c_upper=self.steps.c1,
                                        c_lower=self.steps.c2)

    def momentum(self, t, running, new, previous, samples, depth):
        """Lines 8-9 (STORM): the same samples and depth at the previous
        point (x_{t-1}, y_{t-1}); t = 1: ``new``."""
        if t == 1:
            return new
        _, alpha, beta = self.schedule(t - 1)
        _, old_grad_y_g, old_h = self.estimates_at(*previous, samples, depth)
        (v, w), (grad_y_g, h) = running, new
        # new + (1 - a) (running - old), one fused call
        return (torch.add(grad_y_g, v - old_grad_y_g, alpha=1.0 - alpha),
                torch.add(h, w - old_h, alpha=1.0 - beta))
