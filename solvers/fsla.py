from benchmark_utils.checks.parameters import check_choice, check_in_interval
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.schedules import curvature_rules, decayed_steps
from benchmark_utils.solvers.steps import given_size, given_step

STEP_RULES = ("constant", "inverse_sqrt")


class Solver(GeneralBilevelSolver):
    """FSLA: fully single loop algorithm, without Hessian inverse.

    Li, Gu, Huang, "A Fully Single Loop Algorithm for Bilevel Optimization
    without Hessian Inverse", AAAI 2022, Algorithm 1 with its momentum
    (STORM) hypergradient (a baseline of Huang et al. 2021). A state v
    tracks [grad^2_yy g]^{-1} grad_y f by one step per iteration k, each
    line on fresh batches (B: lower, D: upper):

    1. y_{k+1} = y_k - beta grad_y g(x_k, y_k; B_1);
    2. v_{k+1} = v_k - eta (grad^2_yy g(x_k, y_{k+1}; B_2) v_k
       - grad_y f(x_k, y_{k+1}; D_1));
    3. h_k = grad_x f(x_k, y_{k+1}; D_2)
       - grad^2_xy g(x_k, y_{k+1}; B_3) v_{k+1};
    4. d_k = h_k + (1 - rho) (d_{k-1} - h(x_{k-1}, y_k, v_k; D_2, B_3)),
       d_0 = h_0;
    5. x_{k+1} = x_k - alpha d_k.

    ``outer_step`` = alpha, ``inner_step`` = beta, ``linear_system_step``
    = eta, ``momentum`` = rho (1: no momentum; see GeneralBilevelSolver);
    ``step_rule`` "constant" or "inverse_sqrt": all four divided by
    sqrt(k+1) (benchmark_bilevel's FSLA).
    Our choices where the paper is silent: the order above, v_0 = 0.

    The outer step, the momentum and the batch size were tuned on the
    quick quadratic (docs/solvers.md).
    """

    name = "FSLA"
    parameters = {
        "step_rule": ["constant"],
    }
    size_rules = (given_size("batch_size", 64),)
    # benchopt's own tests run on the 30-sample test quadratic
    test_config = {"batch_size": 16}
    batch_size_may_be_none = True       # None: full passes

    step_rules = (tuned_outer_step(0.2, "alpha"),
                  *curvature_rules("beta", "eta"),
                  given_step("momentum", "rho", "weight of the new STORM "
                             "estimate (1: none)", 0.5))

    def check_parameters(self):
        super().check_parameters()
        check_in_interval("momentum", self.momentum, 0.0, 1.0,
                          closed=(False, True))
        check_choice("step_rule", self.step_rule, STEP_RULES)

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        inner = (self.steps.inner_step, self.steps.linear_system_step,
                 self.steps.momentum)
        outer_step = self.steps.outer_step
        x, y = self.x, self.y
        v = y.new_zeros(y.shape)
        d = Storm()
        previous = None                 # (x_{k-1}, y_k, v_k)
        k = 0
        while True:
            (beta, eta, rho), alpha = decayed_steps(
                k, self.step_rule, inner, outer_step)
            y_next = y - beta * P.grad_g_y(x, y, batch=P.batch_lower(S))   # 1
            v_next = v - eta * (                                           # 2
                P.hvp_yy_g(x, y_next, v, batch=P.batch_lower(S))
                - P.grad_f_y(x, y_next, batch=P.batch_upper(S)))
            upper, lower = P.batch_upper(S), P.batch_lower(S)              # 3

            def hypergradient(x, y, v, upper=upper, lower=lower):
                return (P.grad_f_x(x, y, batch=upper)
                        - P.hvp_xy_g(x, y, v, batch=lower))

            new = hypergradient(x, y_next, v_next)
            old = None if previous is None else hypergradient(*previous)
            direction = d.step(new, old, rho)                              # 4
            # the next correction's previous point: where h_k was taken
            previous = (x, y_next, v_next)
            x = self.to_X(x - alpha * direction)                           # 5
            y, v = y_next, v_next
            self.x, self.y = x, y
            k += 1
            yield
