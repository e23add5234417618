"""Certified reference values (``g*``, ``f*``, ``F*``) of the benchmark's
problems, each computed once per instance and cached on disk.

A reference is reported with an accuracy that holds for the computed
numbers: a candidate point from CVXPY, polished by exact linear algebra or
FISTA, is checked by an independent certificate (a duality or Frank-Wolfe
gap plus worst-case rounding), and gaps are never reported below it.

* :mod:`.cache` -- the disk cache keyed by every dataset parameter, with
  a content digest, a file lock, and a check before every use (a file that
  fails is recomputed with a warning);
* :mod:`.validation` -- the field checks of stored references (present,
  finite, in range);
* :mod:`.identity` -- the reference values as part of a dataset's identity
  in benchopt's result cache;
* :mod:`.precision` -- rounding bounds, the relative floor, Clarabel
  tolerances;
* :mod:`.certificate` -- the dual bracket of a least-squares minimum;
* :mod:`.linear_algebra` -- exact NumPy solves that polish candidates;
* :mod:`.projected_gradient` -- FISTA, the polish of smooth problems;
* :mod:`.least_squares_g_star`, :mod:`.solution_sets`,
  :mod:`.least_squares` -- ``g*``, the exact lower-level solution set and
  ``f*`` of the least-squares problems (regression);
  :mod:`.least_squares_check` -- their re-check when loaded;
* :mod:`.dictionary` -- ``g*`` of continual dictionary learning;
* :mod:`.quadratic` -- ``F*`` of the quadratic general-bilevel problem.

See ``docs/references.md`` for the certificates in more detail.
"""
