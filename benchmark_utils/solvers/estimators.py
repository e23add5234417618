"""Variance-reduced estimators shared by the solvers.

Each estimator wraps one oracle ``oracle(x, batch=...)`` of the counting view
(a gradient or a value) and keeps its running estimate in ``value``. The
caller draws the batch, so the sample accounting stays in the view and the
same batch is, as the papers require, evaluated at both x_t and x_{t-1}.
"""


class Storm:
    """STORM recursive momentum (Cutkosky & Orabona 2019; paper 000 eq. (10)).

        v_t = (1 - a_t) v_{t-1} + grad(x_t; xi_t) - (1 - a_t) grad(x_{t-1}; xi_t)

    with the same fresh sample xi_t at both points; v_0 = grad(x_0; xi_0).
    """

    def __init__(self, oracle):
        self.oracle = oracle
        self.value = None

    def start(self, x, batch):
        self.value = self.oracle(x, batch=batch)
        return self.value

    def update(self, x, x_prev, batch, momentum):
        correction = self.value - self.oracle(x_prev, batch=batch)
        self.value = self.oracle(x, batch=batch) + (1.0 - momentum) * correction
        return self.value

    def step(self, x, x_prev, batch, momentum):
        """``start`` on the first call, ``update`` afterwards."""
        if self.value is None:
            return self.start(x, batch)
        return self.update(x, x_prev, batch, momentum)


class Spider:
    """SPIDER / SARAH path-integrated estimator (Fang et al. 2018; paper 000 eq. (11)).

        v_t = v_{t-1} + grad_S(x_t) - grad_S(x_{t-1})     (same batch S)

    restarted with ``refresh`` (a full or large-batch estimate) every q steps.
    """

    def __init__(self, oracle):
        self.oracle = oracle
        self.value = None

    def refresh(self, x, batch):
        self.value = self.oracle(x, batch=batch)
        return self.value

    def update(self, x, x_prev, batch):
        increment = self.oracle(x, batch=batch) - self.oracle(x_prev, batch=batch)
        self.value = self.value + increment
        return self.value
