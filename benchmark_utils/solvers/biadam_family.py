"""BiAdam's loop (Huang, Li, Gao, Huang, "BiAdam: Fast Adaptive Bilevel
Optimization Methods", arXiv 2106.11396, 2021, Algorithms 1 and 2),
shared by ``solvers/biadam.py`` and ``solvers/vr_biadam.py``: benchopt
loads solver files by path, so a solver that extends another one inherits
from a class of ``benchmark_utils`` (benchopt's documented way), here
:class:`BiAdamFamilySolver`. Each solver file keeps its docstring (the
paper's lines mapped to this code) and its own estimator (``momentum``)
and schedule."""
from benchmark_utils.checks.parameters import (
    check_choice,
    check_in_interval,
    check_int,
    refuse_unread,
)
from benchmark_utils.solvers.adaptive import (
    ADAPTIVE_INPUTS,
    X_MATRICES,
    NormScale,
    adaptive_step,
)
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.hypergradients import draw_neumann_depth
from benchmark_utils.solvers.sampled_hypergradients import (
    draw_samples,
    truncated_hypergradient,
)
from benchmark_utils.solvers.schedules import (
    check_offset,
    neumann_rule,
    power_decay,
)
from benchmark_utils.solvers.steps import (
    constant_rule,
    given_size,
    given_step,
    method_rule,
)


class BiAdamFamilySolver(GeneralBilevelSolver):
    """Parameters, steps, checks and loop of BiAdam (Algorithm 1): lines
    4-7 here, lines 8-9 in :meth:`momentum` (overridden by VR-BiAdam) and
    Theorem 1's schedule in :meth:`schedule` (Theorem 2's in VR-BiAdam).
    See ``solvers/biadam.py`` for the mapping to the paper."""

    parameters = {
        "adaptive": ["adam"],
        "adaptive_input": ["grad_x_f"],
    }
    size_rules = (given_size("neumann_depth_bound", 30),
                  given_size("batch_size", 16))
    batch_size_may_be_none = True       # None: full passes
    step_rules = (
        neumann_rule("linear_system_step", "vartheta"),
        tuned_outer_step(0.3, "gamma"),
        constant_rule("inner_step", "lam", "y step", 1.0),
        # the smallest m the theorem allows (smallest_step_offset)
        given_step("step_scale", "k", "numerator of eta_t", 1.0),
        given_step("c1", "c1", "alpha_{t+1} over eta_t", 1.0),
        given_step("c2", "c2", "beta_{t+1} over eta_t", 1.0),
        method_rule("step_offset", "m", "offset of eta_t",
                    "Theorem 1's max{k^2, (c1 k)^2, (c2 k)^2}",
                    "smallest_step_offset"),
        # the adaptive matrices' constants, eqs. (4) and (5)
        given_step("decay_x", "alpha of (4)", "decay of A_t's moment", 0.9),
        given_step("rho", "rho", "floor of A_t", 1.0),
        given_step("decay_y", "beta of (5)", "decay of b_t", 0.9),
        given_step("b0", "b_0", "start of b_t", 1.0),
        given_step("epsilon", "varepsilon", "floor of B_t", 1.0),
    )

    def skip_problem(self, problem):
        if (X_MATRICES[self.adaptive].diagonal
                and not problem.X.coordinate_separable):
            return True, ("the A_t-weighted projection of a coordinate-wise "
                          "A_t is exact only on a box; use adaptive="
                          "'adagrad_norm' or 'identity' on this X")
        return super().skip_problem(problem)

    def check_parameters(self):
        super().check_parameters()
        check_int("neumann_depth_bound", self.neumann_depth_bound, 1)
        check_choice("adaptive", self.adaptive, tuple(X_MATRICES))
        check_choice("adaptive_input", self.adaptive_input, ADAPTIVE_INPUTS)
        check_in_interval("decay_x", self.decay_x, 0, 1, closed=(False, False))
        check_in_interval("decay_y", self.decay_y, 0, 1, closed=(False, False))
        refuse_unread(self, X_MATRICES[self.adaptive].unread,
                      f"with adaptive={self.adaptive!r}")
        if self.step_offset is not None:
            # below it eta_t, alpha_t or beta_t exceeds 1
            check_offset("step_offset", self.step_offset,
                           self.smallest_step_offset(),
                           "the theorem's smallest offset with these "
                           "step_scale, c1 and c2")

    def smallest_step_offset(self):
        """Theorem 1's max{k^2, (c1 k)^2, (c2 k)^2}."""
        k = self.step_scale
        return max(k ** 2, (self.c1 * k) ** 2, (self.c2 * k) ** 2)

    def schedule(self, t):
        """(eta_t, alpha_{t+1}, beta_{t+1}) of Theorem 1."""
        eta = power_decay(t, self.steps.step_scale, self.steps.step_offset,
                          0.5)
        return eta, self.steps.c1 * eta, self.steps.c2 * eta

    def estimates_at(self, x, y, samples, depth):
        """(grad_x f, grad_y g, estimator (6)) at (x, y) on ``samples``."""
        P = self.problem
        grad_x_f, h = truncated_hypergradient(
            P, x, y, samples, depth,
            vartheta=self.steps.linear_system_step,
            n_terms=self.sizes.neumann_depth_bound)
        return grad_x_f, P.grad_g_y(x, y, batch=samples.lower), h

    def momentum(self, t, running, new, previous, samples, depth):
        """Lines 8-9: (v_t, w_t) from ``running`` = (v_{t-1}, w_{t-1}) and
        ``new`` = (grad_y g, h) at (x_t, y_t); t = 1: ``new``."""
        if t == 1:
            return new
        _, alpha, beta = self.schedule(t - 1)
        (v, w), (grad_y_g, h) = running, new
        return (alpha * grad_y_g + (1.0 - alpha) * v,
                beta * h + (1.0 - beta) * w)

    def iterations(self):
        P, size = self.problem, self.batch(self.sizes.batch_size)
        steps = self.steps
        A = X_MATRICES[self.adaptive](steps.decay_x, steps.rho)  # eq. (4)
        B = NormScale(steps.decay_y, steps.b0, steps.epsilon)   # eq. (5)
        project = None if P.X.unbounded else P.X.project
        from_h = self.adaptive_input == "hypergradient"
        gamma, lam = self.steps.outer_step, self.steps.inner_step
        x, y, previous, running = self.x, self.y, None, None
        t = 1
        while True:
            b = self.sizes.neumann_depth_bound
            samples = draw_samples(P, b, size)                  # line 7
            depth = draw_neumann_depth(b, P.rng)
            grad_x_f, grad_y_g, h = self.estimates_at(x, y, samples, depth)
            running = self.momentum(t, running, (grad_y_g, h), previous,
                                    samples, depth)             # lines 8-9
            v, w = running
            a_t = A.update(h if from_h else grad_x_f)           # line 4
            b_t = B.update(grad_y_g)
            eta = self.schedule(t)[0]
            previous = (x, y)
            x = adaptive_step(x, w, a_t, step=gamma, eta=eta,
                              project=project)                  # line 5
            y = adaptive_step(y, v, b_t, step=lam, eta=eta)     # line 6
            self.x, self.y = x, y
            yield
            t += 1
