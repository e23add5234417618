import torch

from benchmark_utils.checks.parameters import (
    check_choice,
    check_int,
)
from benchmark_utils.solvers.general import (
    GeneralBilevelSolver,
    tuned_outer_step,
)
from benchmark_utils.solvers.inner_loops import inner_gradient_steps
from benchmark_utils.solvers.schedules import strongly_convex_step
from benchmark_utils.solvers.steps import StepRule, given_size, given_step

CHOICES_PHI = ("grad_norm", "value_gap")
# the default joint_y_step times the lower curvature L: the y direction has
# curvature about (1 + lambda_k) L, so 0.16 / L stays stable up to
# lambda_k ~ 11 (0.16 / L_g is the y step tuned on the quick quadratic)
JOINT_Y_STEP_CURVATURE = 0.16


def default_inner_step(solver, problem, steps):
    """1/L_g_start where the run reads the start's curvature (no bound: 1/L
    stays stable up to twice it), else 2/(L + mu_g) (L: Solver.curvature)."""
    L = solver.curvature(problem)
    if solver.uses_start_curvature(problem):
        return 1.0 / L
    return strongly_convex_step(problem.mu_g, L)


STEP_RULES = (
    StepRule("inner_step", "alpha", "y step of the inner loop",
             "1/L_g_start with full passes where declared, else 2/(L + mu_g)",
             default_inner_step, needs=("mu_g", "L_g")),
    tuned_outer_step(0.05, "xi (on x)"),
    StepRule("joint_y_step", "xi (on y)", "y step of the joint update",
             f"{JOINT_Y_STEP_CURVATURE:g}/L",
             lambda solver, problem, steps: (
                 JOINT_Y_STEP_CURVATURE / solver.curvature(problem)),
             needs=("mu_g", "L_g")),
    given_step("eta", "eta", "scale of the barrier phi", 0.5),
)


class Solver(GeneralBilevelSolver):
    """BOME: bilevel optimization made easy (first order, dynamic barrier).

    Ye, Liu, Wright, Stone, Liu, "BOME! Bilevel Optimization Made Easy: A
    Simple First-Order Approach", NeurIPS 2022, Algorithm 1
    (benchmark_bilevel's "BOME"). Iteration k:

    * y^T: T steps y <- y - alpha grad_y g(x_k, y) from y_k;
    * q_k(x, y) = g(x, y) - g(x, y^T); phi_k = eta ||grad q_k||^2
      (``choice_phi`` "grad_norm", the paper's) or eta q_k ("value_gap");
    * lambda_k = max(phi_k - <grad f, grad q_k>, 0) / ||grad q_k||^2
      (:meth:`dynamic_barrier_multiplier`);
    * (x, y)_{k+1} = (x, y)_k - xi (grad f + lambda_k grad q_k).

    ``inner_step`` = alpha, ``outer_step`` = xi on x, ``joint_y_step`` =
    xi on y; ``T``, ``eta``, ``choice_phi`` the paper's.
    Departures: separate x and y steps (the paper has one xi; their scales
    differ between problems); a zero grad q_k gives lambda_k = 0; full
    passes (the paper's deterministic analysis; ``batch_size`` gives a
    stochastic variant); the reported y is y_{k+1}.

    In the step rules L is the lower curvature (``L_g_start`` with full
    passes where declared, else the bound). See docs/solvers.md.
    """

    name = "BOME"
    parameters = {
        "choice_phi": ["grad_norm"],
    }
    size_rules = (given_size("T", 20),
                  given_size("batch_size", None))
    batch_size_may_be_none = True       # None: full passes (the paper's)

    step_rules = STEP_RULES

    @staticmethod
    def dynamic_barrier_multiplier(grad_f, grad_q, phi, sq_norm=None):
        """lambda = max(phi - <grad f, grad q>, 0) / ||grad q||^2 (Ye et al.
        2022, Algorithm 1), ``grad_f`` and ``grad_q`` pairs (d/dx, d/dy) of
        tensors of any shape, ``phi`` a 0-dim tensor. A zero grad q (y already
        minimizes g(x, .) and y_T = y) gives lambda = 0 instead of 0/0: the
        constraint q <= 0 then holds and the step is plain descent on f. No
        host synchronization (the multiplier stays a tensor). ``sq_norm``:
        ||grad q||^2 where the caller has it already."""
        dot = sum(torch.sum(a * b)
                  for a, b in zip(grad_f, grad_q, strict=True))
        if sq_norm is None:
            sq_norm = sum(torch.sum(b * b) for b in grad_q)
        tiny = torch.finfo(sq_norm.dtype).tiny
        return torch.clamp(phi - dot, min=0.0) / torch.clamp(sq_norm, min=tiny)

    def check_parameters(self):
        super().check_parameters()
        check_int("T", self.T, 1)
        check_choice("choice_phi", self.choice_phi, CHOICES_PHI)

    def uses_start_curvature(self, problem):
        """Whether this run's default steps read the problem's
        ``L_g_start``: with full passes (the curvature is the full sum's)
        on a problem that declares it."""
        return (getattr(problem, "L_g_start", None) is not None
                and self.batch(self.batch_size) is None)

    def curvature(self, problem):
        """The L of the default inner and y steps: the problem's
        ``L_g_start`` where :meth:`uses_start_curvature`, else the bound
        ``lower_smoothness`` (``L_g_full`` with full passes, ``L_g`` with
        mini-batches)."""
        if self.uses_start_curvature(problem):
            return problem.L_g_start
        return self.lower_smoothness(problem)

    def iterations(self):
        P = self.problem
        S = self.batch(self.sizes.batch_size)
        eta, xi = self.steps.eta, self.steps.outer_step
        xi_y, alpha = self.steps.joint_y_step, self.steps.inner_step
        value_gap = self.choice_phi == "value_gap"
        x, y = self.x, self.y
        while True:
            y_T = inner_gradient_steps(P, x, y, step=alpha,
                                       n_steps=self.sizes.T, batch_size=S)
            grad_f = P.grad_f(x, y, batch=P.batch_upper(S))
            batch = P.batch_lower(S)        # one batch for all of q_k
            grad_x_g, grad_y_g = P.grad_g(x, y, batch=batch)
            grad_q = (grad_x_g - P.grad_g_x(x, y_T, batch=batch), grad_y_g)
            sq_norm = sum(torch.sum(d * d) for d in grad_q)
            if value_gap:
                phi = eta * (P.g(x, y, batch=batch) - P.g(x, y_T, batch=batch))
            else:
                phi = eta * sq_norm
            lam = self.dynamic_barrier_multiplier(grad_f, grad_q, phi, sq_norm)
            x = self.to_X(x - xi * (grad_f[0] + lam * grad_q[0]))
            y = y - xi_y * (grad_f[1] + lam * grad_q[1])
            self.x, self.y = x, y
            yield
