"""The lower-level gradient loop of the double-loop general solvers, the
smoothness bound its default step reads (:func:`lower_smoothness`, also
behind ``GeneralBilevelSolver.lower_smoothness``), and the ratio of a
mini-batch's expected smoothness to the full sum's that the default steps
of the variance-reduced and momentum solvers read
(:func:`batch_smoothness_ratio`).

AmIGO (Arbel & Mairal 2022, Algorithm 2: T steps of SGD on y, warm-started
at the previous outer iteration's y), BSA (Ghadimi & Wang 2018, §3: t_k
steps of SGD on y, warm-started likewise) and BOME (Ye, Liu, Wright, Stone,
Liu 2022, Algorithm 1: T steps of gradient descent on y from the current y)
run the same loop

    y_t = y_{t-1} - step grad_y g(x, y_{t-1}; S_t),   t = 1..n_steps,

with a fresh lower batch S_t per step (a full pass when the batch size is
None: deterministic gradient descent, each pass charged n_lower samples by
the counting view). It is written once here; what differs between the
methods is where it starts, how many steps it takes and what is done with
its end point.

The AID loop (``benchmark_utils/solvers/implicit_differentiation.py``)
calls it too; stocBiO (``solvers/stocbio.py``) writes the same loop inline.
"""


def inner_gradient_steps(P, x, y, *, step, n_steps, batch_size):
    """``n_steps`` steps y <- y - step grad_y g(x, y; S_t) from ``y``.

    ``P``: the counting view (it draws and charges each S_t: ``batch_size``
    samples, or a full pass for None); ``step``: a constant step (a float);
    returns the last iterate (``y`` itself when ``n_steps`` is 0).
    """
    for _ in range(n_steps):
        y = y - step * P.grad_g_y(x, y, batch=P.batch_lower(batch_size))
    return y


def lower_smoothness(problem, full_passes):
    """The L_g of a default lower-level step: with full passes the full
    sum's ``L_g_full`` where the problem declares it, else ``L_g`` (the
    bound for any batch, down to one sample), so a step <= 1 / L_g is safe
    on every batch the run draws."""
    if full_passes and problem.L_g_full is not None:
        return problem.L_g_full
    return problem.L_g


def batch_smoothness_ratio(problem, batch_size):
    """How much larger than the full sum's the curvature a mini-batch of
    ``batch_size`` samples (drawn with replacement) shows, from the lower
    level's declared bounds: the expected smoothness of such a batch is
    ``L(b) = L_full + (L_max - L_full) / b`` (the with-replacement case of
    the mini-batch SAGA analysis, Gazagnadou, Gower, Salmon 2019, "Optimal
    mini-batch and step sizes for SAGA", ICML, Sec. 3), with ``L_max = L_g``
    (one sample) and ``L_full = L_g_full``; the ratio is ``L(b) / L_full
    >= 1``.

    Variance-reduced and momentum estimators (SAGA tables, STORM) carry a
    sample's term across iterations and correct it only when the sample is
    drawn again, so their stable step is about 1/L(b) rather than the full
    sum's 1/L_full (the steps the outer defaults are tuned at on the
    quadratic, whose samples are alike). Where a problem's samples differ
    (matrix completion: one row per sample, L_g = n L_g_full up to the
    regularizers) the ratio is large; where they are alike it is about 1.
    The lower level's bounds are the only per-sample constants the problems
    declare, so they stand for both levels (both share the sampling: one
    sample of each level is one row, one data point). 1 for full passes
    (``batch_size`` None) and for a problem that does not declare
    ``L_g_full`` (treated as homogeneous)."""
    if batch_size is None or problem.L_g_full is None or problem.L_g is None:
        return 1.0
    L_full, L_max = problem.L_g_full, max(problem.L_g, problem.L_g_full)
    return (L_full + (L_max - L_full) / batch_size) / L_full
