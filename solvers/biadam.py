from benchmark_utils.solvers.biadam_family import BiAdamFamilySolver


class Solver(BiAdamFamilySolver):
    """BiAdam: adaptive bilevel optimization with momentum estimators.

    Huang, Li, Gao, Huang, "BiAdam: Fast Adaptive Bilevel Optimization
    Methods", arXiv 2106.11396, 2021, Algorithm 1. Iteration t = 1, 2, ...:

    * line 7: K + 2 batches, a depth k_t ~ U{0..K-1} (K =
      ``neumann_depth_bound``);
      h_t = estimator (6), vartheta = ``linear_system_step``;
    * lines 8-9: v_t = alpha_t grad_y g + (1 - alpha_t) v_{t-1}, w_t =
      beta_t h_t + (1 - beta_t) w_{t-1} (t = 1: the plain estimates);
    * line 4: A_t of eq. (4) (``adaptive``, ``decay_x``, ``rho``) built from
      ``adaptive_input`` = "grad_x_f" (as written) or "hypergradient" (h_t:
      Adam on w_t); B_t of eq. (5) (``decay_y``, ``b0``, ``epsilon``);
    * lines 5-6: x_{t+1} = x_t + eta_t (x~ - x_t), x~ the A_t-weighted
      projected step of size gamma = ``outer_step``; y_{t+1} = y_t - lam
      eta_t v_t / (b_t + eps), lam = ``inner_step``;
    * Theorem 1: eta_t = k/(m + t)^{1/2} (k, m = ``step_scale``,
      ``step_offset``), alpha_{t+1} = c1 eta_t, beta_{t+1} = c2 eta_t.

    Departures: lines 7-9 of iteration t - 1 run at the start of iteration
    t; all K + 2 batches are charged whatever k_t; the last iterate is
    reported; a coordinate-wise A_t runs only on a coordinate-separable X.

    The paper reports no defaults; m's rule is the smallest Theorem 1
    allows (docs/solvers.md).
    """

    name = "BiAdam"
