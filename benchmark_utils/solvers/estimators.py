"""Variance-reduced estimators shared by the solvers, driven by values.

An estimator keeps one running estimate (of a gradient or of a value) in
``value`` and is fed the oracle's answers: the solver draws the batch and
calls the counting view's oracle itself, so the sample accounting stays in
the view, one oracle call serves every estimate computed from it (g and
grad g from one ``g_and_grad_g`` pass), and the correction evaluates the
same batch at x_t and x_{t-1}, as the papers require.
:func:`at_both_points` makes those two calls.
"""
import torch


def at_both_points(oracle, batch, x, x_prev):
    """``(oracle(x_t; batch), oracle(x_{t-1}; batch))`` on one drawn batch.

    Without a previous point (``x_prev`` None: the first iteration) only the
    first is evaluated and the second is None, so nothing is evaluated that
    the method does not use.
    """
    new = oracle(x, batch=batch)
    return new, (None if x_prev is None else oracle(x_prev, batch=batch))


class Storm:
    """STORM recursive momentum (Cutkosky & Orabona 2019; Cao et al. 2023,
    eq. (10) and Alg. 1 lines 5-9; Giang-Tran et al. 2025, Alg. 1).

        v_t = (1 - a_t) v_{t-1} + h(x_t; xi_t) - (1 - a_t) h(x_{t-1}; xi_t)

    with the same fresh sample xi_t at both points, and v_0 = h(x_0; xi_0),
    the plain one-batch estimate.
    """

    def __init__(self):
        self.value = None

    def step(self, new, old, momentum):
        """v_t from ``new`` = h(x_t; xi_t) and ``old`` = h(x_{t-1}; xi_t).

        ``old`` None (the first step) gives v_0 = ``new``; ``momentum`` is
        a_t in [0, 1] (1: plain stochastic estimate).
        """
        if old is None:
            self.value = new
        elif isinstance(new, torch.Tensor):
            # one fused call for new + (1 - a) (v - old): the estimate is
            # updated every iteration, so each tensor call saved counts
            self.value = torch.add(new, self.value - old,
                                   alpha=1.0 - momentum)
        else:
            self.value = new + (1.0 - momentum) * (self.value - old)
        return self.value


class Spider:
    """SPIDER / SARAH path-integrated estimator (Fang et al. 2018; Cao et
    al. 2023, eq. (11) and Alg. 2 lines 4-10; Giang-Tran et al. 2025, Alg. 2).

        v_t = v_{t-1} + h_S(x_t) - h_S(x_{t-1})     (same batch S)

    restarted by :meth:`refresh` (a full pass, or a large batch) every q
    steps.
    """

    def __init__(self):
        self.value = None

    def refresh(self, value):
        """Restart from ``value`` = h(x_t) on a full pass."""
        self.value = value
        return self.value

    def update(self, new, old):
        """v_t from ``new`` = h_S(x_t) and ``old`` = h_S(x_{t-1})."""
        self.value = self.value + (new - old)
        return self.value
