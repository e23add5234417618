"""Weighted averages of the iterates that some methods report instead of
the last iterate, each kept in O(d) memory and time per step.

* :class:`RegularizedAverage`: z_t of IR-SCG / IR-FSCG (Giang-Tran et al.
  2025, Alg. 1-2), weights from the regularization schedule sigma_t;
* :class:`RunningAverage`: ybar_t of aR-IP-SeG (Cao et al. 2023, eq. (81)),
  any non-negative weights.
"""
import torch


class RegularizedAverage:
    """The weighted average z_t of Giang-Tran et al. 2025 (Alg. 1-2).

        z_t = [(t+1) t sigma_t x_t + sum_{i=start}^{t} w_i x_i]
              / [(t+1) t sigma_t + sum_{i=start}^{t} w_i],
        w_i = (i+1) i (sigma_{i-1} - sigma_i) >= 0.

    Running sums M = sum w_i x_i and W = sum w_i make each step one axpy;
    z_t is only formed when asked for. ``start`` is 1 for IR-SCG and q+1 for
    IR-FSCG (its sum runs over [t+1] minus [q]). z_t is a convex combination
    of x_1..x_t, and z_1 = x_1.
    """

    def __init__(self, x0, start=1):
        self.start = start
        self.x_t, self.head = x0, 0.0
        self.weighted_sum = None
        self.total_weight = 0.0

    def update(self, t, x_t, sigma_prev, sigma_t):
        """Account for iterate x_t (t >= 1) given sigma_{t-1} and sigma_t."""
        self.x_t, self.head = x_t, (t + 1) * t * sigma_t
        if t < self.start:
            return
        w = (t + 1) * t * (sigma_prev - sigma_t)
        if self.weighted_sum is None:
            self.weighted_sum = w * x_t
        elif w != 0.0:
            # M + w x_t in one fused call
            self.weighted_sum = torch.add(self.weighted_sum, x_t, alpha=w)
        self.total_weight += w

    def value(self):
        """z_t (x_t while no iterate has a weight yet; z_0 = x_0)."""
        if self.weighted_sum is None or self.head + self.total_weight == 0:
            return self.x_t
        return ((self.head * self.x_t + self.weighted_sum)
                / (self.head + self.total_weight))


class RunningAverage:
    """ybar_{t+1} = (Gamma_t ybar_t + w_t y_{t+1}) / Gamma_{t+1},
    Gamma_{t+1} = Gamma_t + w_t (Cao et al. 2023, eq. (81)).

    Starts from ``start`` with Gamma_0 = 0 (the paper gives neither), so the
    first added point is the first average.
    """

    def __init__(self, start):
        self.value = start
        self.total_weight = 0.0

    def add(self, point, weight):
        self.value = ((self.total_weight * self.value + weight * point)
                      / (self.total_weight + weight))
        self.total_weight += weight
