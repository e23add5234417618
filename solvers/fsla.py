from benchmark_utils.checks.parameters import check_in_interval
from benchmark_utils.solvers.estimators import Storm
from benchmark_utils.solvers.general import GeneralBilevelSolver
from benchmark_utils.solvers.schedules import curvature_steps


class Solver(GeneralBilevelSolver):
    """FSLA: fully single loop algorithm, without Hessian inverse.

    Li, Gu, Huang, "A Fully Single Loop Algorithm for Bilevel Optimization
    without Hessian Inverse", AAAI 2022 (arXiv 2112.04660), Algorithm 1 in
    its stochastic form with the momentum-based (STORM-type) hypergradient
    the paper analyses and runs; a baseline of Huang et al. 2021 (BiAdam).
    Reconstructed from the paper's public description (no code was copied).

    Instead of solving grad^2_yy g w = grad_y f at every iteration (an inner
    loop, a Neumann series or conjugate gradient), a state v tracks
    [grad^2_yy g]^{-1} grad_y f across iterations with one step of the
    linear system per iteration. Iteration k, from (x_k, y_k, v_k) and the
    previous direction d_{k-1}, each line on fresh independent batches
    (B: lower, D: upper, of ``batch_size`` samples):

    1. y_{k+1} = y_k - beta grad_y g(x_k, y_k; B_1);
    2. v_{k+1} = v_k - eta (grad^2_yy g(x_k, y_{k+1}; B_2) v_k
       - grad_y f(x_k, y_{k+1}; D_1));
    3. h_k = grad_x f(x_k, y_{k+1}; D_2)
       - grad^2_xy g(x_k, y_{k+1}; B_3) v_{k+1};
    4. d_k = h_k + (1 - rho) (d_{k-1} - h(x_{k-1}, y_k, v_k; D_2, B_3))
       (STORM, :class:`~benchmark_utils.solvers.estimators.Storm`: the
       previous iteration's point, on this iteration's D_2 and B_3);
       d_0 = h_0;
    5. x_{k+1} = x_k - alpha d_k.

    So every product of iteration k is taken at (x_k, y_{k+1}): y moves
    first, then v and the hypergradient use the new y and the current x,
    and x moves last. The hypergradient estimate uses the updated v_{k+1}.

    Per iteration: two upper batches (D_1, D_2) and three lower batches
    (B_1, B_2, B_3), each charged once; 4 gradient calls (3 at k = 0) and
    3 Hessian-vector products (2 at k = 0), the correction evaluating
    grad_x f and grad^2_xy g at the previous point on the same batches.

    Defaults: ``beta`` None is 2/(L_g + mu_g) and ``eta`` None is 1/L_g
    (a contracting gradient step on g and on the quadratic
    1/2 v^T grad^2_yy g v - grad_y f^T v, from the problem's declared
    constants; a problem without them is skipped unless both are given).
    The theory's constant steps need constants no problem provides;
    ``alpha``, ``rho`` and ``batch_size`` are tuned on the quick quadratic
    (with 16 samples the constant steps of y and v leave a noise floor
    near a tenth of the starting hypergradient norm there; 64 clears it).

    Choices where the paper is silent or that depart from it:

    * the names: alpha (x step), beta (y step), eta (v step), rho (the
      momentum weight of the new estimate; 1 turns the momentum off);
    * the order of the updates and the points of evaluation above (y
      first, v and h at (x_k, y_{k+1})), and v_0 = 0;
    * the five batches are independent (one per oracle line); the batch of
      line 3 is re-used at the previous point for the correction;
    * ``batch_size`` None uses full passes (the deterministic FSLA, where
      the momentum only averages); on a problem with one sample per level
      every batch is that sample;
    * the reported y is y_{k+1};
    * a constrained X (the paper's X = R^d): x_{k+1} is projected onto X
      (an extension without guarantee); unconstrained problems call no
      projection.

    Outer step: ``alpha`` None (the default) is 0.2 times the
    problem's declared ``outer_step_scale`` (1 on the quadratic, where
    0.2 was tuned; see ``GeneralBilevelSolver.outer_steps``); a
    given ``alpha`` is used as is.
    """

    name = "FSLA"
    parameters = {
        "alpha": [None],
        "beta": [None],
        "eta": [None],
        "rho": [0.5],
        "batch_size": [64],
    }
    # benchopt's own tests run on the 30-sample test quadratic
    test_config = {"batch_size": 16}
    batch_size_may_be_none = True       # None: full passes

    defaults_from_problem = ("beta", "eta")
    outer_steps = {"alpha": 0.2}

    def check_parameters(self):
        super().check_parameters()
        check_in_interval("rho", self.rho, 0.0, 1.0, closed=(False, True))

    def check_with_problem(self, problem):
        self.beta_, self.eta_ = curvature_steps(
            problem.mu_g, problem.L_g, self.beta, self.eta)

    def iterations(self):
        P = self.problem
        S = self.batch(self.batch_size)
        alpha, beta, eta = self.alpha_, self.beta_, self.eta_
        x, y = self.x, self.y
        v = y.new_zeros(y.shape)
        d = Storm()
        previous = None                 # (x_{k-1}, y_k, v_k)
        while True:
            y_next = y - beta * P.grad_g_y(x, y, batch=P.batch_lower(S))   # 1
            v_next = v - eta * (                                           # 2
                P.hvp_yy_g(x, y_next, v, batch=P.batch_lower(S))
                - P.grad_f_y(x, y_next, batch=P.batch_upper(S)))
            upper, lower = P.batch_upper(S), P.batch_lower(S)              # 3

            def hypergradient(x, y, v):
                return (P.grad_f_x(x, y, batch=upper)
                        - P.hvp_xy_g(x, y, v, batch=lower))

            new = hypergradient(x, y_next, v_next)
            old = None if previous is None else hypergradient(*previous)
            direction = d.step(new, old, self.rho)                         # 4
            # the next correction's previous point: where h_k was taken
            previous = (x, y_next, v_next)
            x = self.to_X(x - alpha * direction)                           # 5
            y, v = y_next, v_next
            self.x, self.y = x, y
            yield
