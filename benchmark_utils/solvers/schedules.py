"""Iterative regularization of paper 001 (IR-SCG, IR-FSCG): schedules and z_t.

Both methods take one Frank-Wolfe step per iteration on
Phi_t = sigma_t F + G with a vanishing sigma_t, a step alpha_t, and report
either the last iterate x_t or the weighted average z_t (note 001 §2).
"""
import math


def ir_scg_schedule(t, convex, varsigma, p, omega):
    """(alpha_t, sigma_t) of IR-SCG, paper 001 Thm 1 (convex) / Thm 2 (nonconvex).

    convex:    alpha_t = 2/(t+2),          sigma_t = varsigma (t+1)^-p
    nonconvex: alpha_t = (t+1)^-omega,     sigma_t = varsigma (t+1)^-p
    """
    alpha = 2.0 / (t + 2) if convex else (t + 1.0) ** -omega
    return alpha, varsigma * (t + 1.0) ** -p


def ir_fscg_schedule(t, q, convex, varsigma, p, omega):
    """(alpha_t, sigma_t) of IR-FSCG, paper 001 Thm 3 (convex) / Thm 4 (nonconvex).

    convex:    alpha_t = log(q)/q for t < q, 2/(t+2) after;
               sigma_t = varsigma (max(t, q) + 1)^-p
    nonconvex: alpha_t = log(q+1)/(q+1) for t <= q, (t+1)^-omega after;
               sigma_t = varsigma (max(t, q+1) + 1)^-p
    sigma_t is frozen during the first q (q+1) steps, so sigma_0 is
    varsigma (q+1)^-p, not varsigma (note 001 §6.4). Appendix D.2 prints
    2/(t+1) for the convex step after the warm phase; Thm 3's 2/(t+2) is
    used here (it keeps alpha_q < 1, note 001 §6.5).
    """
    if convex:
        alpha = math.log(q) / q if t < q else 2.0 / (t + 2)
        return alpha, varsigma * (max(t, q) + 1.0) ** -p
    alpha = math.log(q + 1) / (q + 1) if t <= q else (t + 1.0) ** -omega
    return alpha, varsigma * (max(t, q + 1) + 1.0) ** -p


class RegularizedAverage:
    """The weighted average z_t of paper 001 (Algorithms 1-2), in O(d) per step.

        z_t = [(t+1) t sigma_t x_t + sum_{i=start}^{t} w_i x_i]
              / [(t+1) t sigma_t + sum_{i=start}^{t} w_i],
        w_i = (i+1) i (sigma_{i-1} - sigma_i) >= 0.

    Running sums M = sum w_i x_i and W = sum w_i make each step one axpy;
    z_t is only formed when asked for. ``start`` is 1 for IR-SCG and q+1 for
    IR-FSCG (its sum runs over [t+1] minus [q]).
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
            self.weighted_sum = self.weighted_sum + w * x_t
        self.total_weight += w

    def value(self):
        """z_t (x_t while no iterate has a weight yet; z_0 = x_0)."""
        if self.weighted_sum is None or self.head + self.total_weight == 0:
            return self.x_t
        return ((self.head * self.x_t + self.weighted_sum)
                / (self.head + self.total_weight))
