"""Hyper-representation learning as a general bilevel problem.

Huang et al. 2021 (BiAdam, Sec. 5.2 and App. A.1.2): learn the parameters
tau of a representation phi(a; tau) shared by few-shot tasks, so that a
linear head w fitted on a task's support set classifies its query set::

    f(tau, w; t) = mean_{(a, b) in query(t)}   CE(w^T phi~(a; tau), b)
    g(tau, w; t) = mean_{(a, b) in support(t)} CE(w^T phi~(a; tau), b)
                   + C ||w||^2,

with ``phi~ = (phi, 1)`` (an intercept) and C = 0.01. Here a finite pool
of T tasks replaces the expectation: ``x = tau`` (flat, see
:mod:`benchmark_utils.problems.representation_networks`), ``y = (w_1, ...,
w_T)`` stacks one head per task, a sample of either level is a task, and
``f(x, y) = mean_t f(x, w_t; t)``, ``g(x, y) = mean_t g(x, w_t; t)``; g is
separable, so y*(x) stacks the per-task heads. ``mu_g = 2C / T``, ``L_g =
(n_features + 1) / 2 + 2C`` bounds every batch, ``L_g_full = L_g / T``.

Exact quantities (off the clock): every head fitted by batched Newton
(:mod:`~benchmark_utils.problems.task_heads`) to ``||grad|| <= 1e-10 *
2C`` per task, certified in ``inner_accuracy``; the hypergradient solves
the per-task Hessian systems and applies the cross product through the
network. ``task_metrics``: ``test_accuracy`` and ``test_loss`` of heads
fitted on held-out tasks. Derivations and choices: docs/problems.md.
"""
import torch
from torch.func import grad as func_grad

from benchmark_utils.checks.parameters import check_int, check_positive
from benchmark_utils.problems.batches import is_full
from benchmark_utils.problems.general import GeneralBilevelProblem
from benchmark_utils.problems.task_heads import RidgeSoftmaxHeads
from benchmark_utils.sets import WholeSpace


class HyperRepresentationBilevel(GeneralBilevelProblem):
    """Few-shot hyper-representation learning (module doc).

    ``train`` and ``test`` are dicts of task tensors as made by
    :func:`benchmark_utils.data.few_shot_tasks.make_tasks`; ``network`` a
    :class:`~benchmark_utils.problems.representation_networks.RepresentationNetwork`;
    ``x0`` its initial parameters.
    """

    F_convex = False
    # Outer steps: the solvers' default outer steps were tuned on the
    # quadratic, whose hypergradient entries are of order 1. Here F is a
    # mean cross-entropy whose hypergradient in the network's weights has a
    # norm of order 0.5 at a random start, spread over thousands of
    # weights, and steps of about 1 times it are what move the network
    # (measured on the quick instance: stocBiO's outer_step = 1 and 3 both
    # raise the meta-test accuracy from 0.52 to 0.73 in 80 iterations,
    # outer_step = 0.1 to 0.55; full-gradient descent with a step of 40
    # drives the tanh features to a constant, where F = log(ways) is flat).
    # So 10: the quadratic's steps times 10 (stocBiO's outer_step = 1,
    # BiAdam's outer_step = 3).
    outer_step_scale = 10.0

    def __init__(self, train, test, ways, C, network, x0, device="cpu"):
        self.device = torch.device(device)
        self.C = float(check_positive("C", C))
        self.ways = check_int("ways", ways, 2)
        self.network = network
        self.train = self._task_tensors(train)
        self.test = self._task_tensors(test)
        self.n_tasks = self.train["support"].shape[0]
        self.n_lower = self.n_upper = self.n_tasks
        # a sample of either level is a task (its query and support sets)
        self.levels_share_samples = True
        self.n_head = network.n_features + 1
        self.head_shape = (self.ways, self.n_head)
        self.heads = RidgeSoftmaxHeads(self.C, self.ways, self.n_head)
        self.dim_x = network.n_params
        self.dim_y = self.n_tasks * self.ways * self.n_head
        self.X = WholeSpace(self.dim_x)
        self.mu_g = 2.0 * self.C / self.n_tasks
        self.L_g = 0.5 * self.n_head + 2.0 * self.C
        self.L_g_full = self.L_g / self.n_tasks
        self.x0 = self.as_tensor(x0)
        # the full sum's curvature at the start (x0, y0 = 0), read by
        # default steps that want the curvature a run meets rather than the
        # bound L_g_full (12x larger on the quick instance): p uniform, so
        # task t's block is [(I - 1 1^T / k) / k kron Phi_t^T Phi_t / n +
        # 2C I] / T, of top eigenvalue (lambda_max(Phi_t^T Phi_t / n) / k +
        # 2C) / T
        with torch.no_grad():
            phi = self.features(self.x0, self.train["support"])
            top = torch.linalg.eigvalsh(
                phi.transpose(1, 2) @ phi / phi.shape[1])[:, -1].max()
        self.L_g_start = (float(top) / self.ways + 2.0 * self.C) / self.n_tasks
        self.y0 = torch.zeros(self.dim_y, dtype=self.dtype,
                              device=self.device)
        self.inner_accuracy = None
        self._cache = None          # (x, y*(x))
        self._test_heads = None     # warm start of the meta-test fits
        self._features = None       # (x, exact_features at x)
        self.adjoint_accuracy = None
        # torch.func's first call imports torch._dynamo (seconds): pay it
        # here, off every clock, rather than in a solver's first iteration
        func_grad(lambda a: (a ** 2).sum())(torch.zeros(1, dtype=self.dtype))

    def _task_tensors(self, tasks):
        out = {}
        for key in ("support", "query"):
            out[key] = self.as_tensor(tasks[key])
            out[key + "_labels"] = torch.as_tensor(
                tasks[key + "_labels"], dtype=torch.int64, device=self.device)
        return out

    # -- pieces -----------------------------------------------------------
    def _heads(self, y):
        return y.reshape(-1, *self.head_shape)

    def features(self, x, images):
        """phi~ = (phi(a; x), 1) for images (B, n, c, h, w): (B, n, D)."""
        B, n = images.shape[:2]
        phi = self.network.features(x, images.reshape(B * n,
                                                      *images.shape[2:]))
        phi = phi.reshape(B, n, -1)
        return torch.cat([phi, torch.ones_like(phi[..., :1])], dim=-1)

    def _select(self, tasks, key, batch):
        return self.rows(tasks[key], batch), self.rows(
            tasks[key + "_labels"], batch)

    def _to_y(self, batch, per_task):
        """The batch mean of per-task head blocks (B, k, D) as a vector of
        y's shape (zero on the heads outside the batch)."""
        per_task = per_task / per_task.shape[0]
        if is_full(batch):
            return per_task.reshape(-1)
        out = torch.zeros(self.n_tasks, *self.head_shape, dtype=self.dtype,
                          device=per_task.device)
        return out.index_add(0, batch, per_task).reshape(-1)

    def _level(self, upper, x, y, batch, with_grad_x):
        """Features, labels and heads of the batch at one level."""
        images, labels = self._select(self.train,
                                      "query" if upper else "support", batch)
        if with_grad_x:
            phi = self.features(x, images)
        else:
            with torch.no_grad():
                phi = self.features(x, images)
        return phi, labels, self.rows(self._heads(y), batch)

    # -- values -------------------------------------------------------------
    def f(self, x, y, *, batch=None):
        phi, labels, W = self._level(True, x, y, batch, True)
        return self.heads.ce(phi, labels, W)[0].mean()

    def g(self, x, y, *, batch=None):
        phi, labels, W = self._level(False, x, y, batch, True)
        ce = self.heads.ce(phi, labels, W)[0]
        return (ce + self.C * (W ** 2).sum(dim=(1, 2))).mean()

    # -- gradients in y (closed form; the x parts by torch.func) -------------
    def _grad_y(self, upper, x, y, batch):
        phi, labels, W = self._level(upper, x, y, batch, False)
        _, probs = self.heads.ce(phi, labels, W)
        blocks = torch.einsum("bnk,bnd->bkd",
                              self.heads.residual(probs, labels), phi)
        if not upper:
            blocks = blocks + 2.0 * self.C * W
        return self._to_y(batch, blocks)

    def grad_f_y(self, x, y, *, batch=None):
        return self._grad_y(True, x, y, batch)

    def grad_g_y(self, x, y, *, batch=None):
        return self._grad_y(False, x, y, batch)

    # -- second order -------------------------------------------------------
    def hvp_yy_g(self, x, y, v, *, batch=None):
        """Per task: mean_i [diag(p_i) - p_i p_i^T] (V phi~_i) phi~_i^T
        + 2C V, batch-averaged (closed form, features without grad)."""
        phi, labels, W = self._level(False, x, y, batch, False)
        _, probs = self.heads.ce(phi, labels, W)
        V = self.rows(self._heads(v), batch)
        return self._to_y(batch, self.heads.hessian_product(phi, probs, V))

    def hvp_xy_g(self, x, y, v, *, batch=None):
        """grad_x <grad_y g(x, y), v>: one vector-Jacobian product through
        the network (the ridge does not depend on x)."""
        images, labels = self._select(self.train, "support", batch)
        W = self.rows(self._heads(y), batch)
        V = self.rows(self._heads(v), batch)
        n_batch = W.shape[0]

        def pairing(x_):
            phi = self.features(x_, images)
            _, probs = self.heads.ce(phi, labels, W)
            blocks = torch.einsum("bnk,bnd->bkd",
                                  self.heads.residual(probs, labels), phi)
            return (blocks * V).sum() / n_batch
        return func_grad(pairing)(x)

    # -- exact quantities ---------------------------------------------------
    def exact_features(self, x, side, key):
        """phi~ of the ``key`` sets ("support" / "query") of the ``side``
        tasks ("train" / "test") at x, without grad, kept for the last x:
        one evaluation of the metrics computes each once."""
        if self._features is None or not torch.equal(self._features[0], x):
            self._features = (x.clone(), {})
        cache = self._features[1]
        if (side, key) not in cache:
            tasks = self.train if side == "train" else self.test
            with torch.no_grad():
                cache[side, key] = self.features(x, tasks[key])
        return cache[side, key]

    def inner_solution(self, x):
        """y*(x) (module doc), warm-started at the last solution;
        ``inner_accuracy`` is the certified bound on ||y - y*(x)||."""
        if self._cache is not None and torch.equal(self._cache[0], x):
            return self._cache[1].clone()
        start = self.y0 if self._cache is None else self._cache[1]
        with torch.no_grad():
            heads, norms = self.heads.fit(
                self.exact_features(x, "train", "support"),
                self.train["support_labels"], self._heads(start))
        self.inner_accuracy = float(torch.linalg.vector_norm(norms)) / (
            2.0 * self.C)
        y = heads.reshape(-1)
        self._cache = (x.clone(), y.clone())
        return y

    def hypergradient(self, x, y_star=None):
        """grad F(x) = grad_x f - grad^2_xy g [grad^2_yy g]^-1 grad_y f at
        y*(x); the Hessian is block diagonal, solved exactly per task."""
        y = self.inner_solution(x) if y_star is None else y_star
        W = self._heads(y)
        with torch.no_grad():
            phi = self.exact_features(x, "train", "support")
            _, probs = self.heads.ce(phi, self.train["support_labels"], W)
            # the full Hessian's blocks are H_t / T and the full grad_y f's
            # blocks grad f_t / T: the solution's blocks are H_t^-1 grad f_t
            phi_q = self.exact_features(x, "train", "query")
            labels_q = self.train["query_labels"]
            _, probs_q = self.heads.ce(phi_q, labels_q, W)
            rhs = torch.einsum("bnk,bnd->bkd",
                               self.heads.residual(probs_q, labels_q), phi_q)
            z, self.adjoint_accuracy = self.heads.adjoint(phi, probs, rhs)
        grad_x = func_grad(lambda a: self.f(a, y))(x)
        return grad_x - self.hvp_xy_g(x, y, z.reshape(-1))

    # -- task metrics -------------------------------------------------------
    def task_metrics(self, x, y):
        """``test_accuracy`` and ``test_loss`` on the meta-test tasks
        (module doc); they do not depend on the iterate's y."""
        test = self.test
        with torch.no_grad():
            start = (torch.zeros(test["support"].shape[0], *self.head_shape,
                                 dtype=self.dtype, device=self.device)
                     if self._test_heads is None else self._test_heads)
            heads, _ = self.heads.fit(self.exact_features(x, "test",
                                                          "support"),
                                      test["support_labels"], start)
            self._test_heads = heads
            loss, probs = self.heads.ce(
                self.exact_features(x, "test", "query"),
                test["query_labels"], heads)
            hits = tie_shared_hits(probs, test["query_labels"])
        return {"test_accuracy": float(hits.mean()),
                "test_loss": float(loss.mean())}

    # -- starts -------------------------------------------------------------
    def random_start(self, generator):
        """A fresh random initialization of the network (the scheme of
        ``x0``, from ``generator``) and y0 = 0."""
        x = self.network.initial_parameters(generator, self.dtype)
        return x.to(self.device), self.y0.clone()

    def __repr__(self):
        return (f"HyperRepresentationBilevel(n_tasks={self.n_tasks}, "
                f"ways={self.ways}, n_test_tasks="
                f"{self.test['support'].shape[0]}, C={self.C}, "
                f"network={self.network!r})")


# predicted probabilities within this relative distance of the largest are
# a tie: a saturated network (features exactly +-1) gives classes identical
# heads, whose logits then differ by rounding only
TIE_RTOL = 1e-12


def tie_shared_hits(probs, labels):
    """Per query, the share of the top prediction that is right: 1 or 0,
    or 1/m where m classes tie for the largest probability and the label
    is one of them (the expected accuracy of breaking the tie at random,
    instead of letting rounding decide)."""
    top = probs.max(dim=-1, keepdim=True).values
    tied = probs >= top * (1.0 - TIE_RTOL)
    right = tied.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return right.to(probs.dtype) / tied.sum(dim=-1).to(probs.dtype)

