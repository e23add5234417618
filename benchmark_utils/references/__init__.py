"""Certified reference values (``g*``, ``f*``, ``F*``) of the benchmark's
problems, each computed once per instance and cached on disk.

A reference is reported with an accuracy that holds for the computed
numbers: a candidate point from CVXPY, polished by exact linear algebra or
FISTA, is checked by an independent certificate (a duality or Frank-Wolfe
gap plus worst-case rounding), and gaps are never reported below it.

* :mod:`.cache` -- the disk cache (keyed by every dataset parameter, with a
  content digest, a file lock and a check before every use);
* :mod:`.checks` -- the field checks of stored references;
* :mod:`.cache_key` -- the reference values in a dataset's identity in
  benchopt's result cache;
* :mod:`.precision`, :mod:`.certificate`, :mod:`.linear_algebra`,
  :mod:`.projected_gradient` -- rounding bounds and tolerances, the dual
  bracket of a least-squares minimum, exact polishing solves, FISTA;
* :mod:`.least_squares_g_star`, :mod:`.solution_sets`,
  :mod:`.least_squares`, :mod:`.least_squares_check` -- ``g*``, the exact
  lower-level solution set, ``f*`` of the regression problems, their
  re-check when loaded;
* :mod:`.dictionary`, :mod:`.quadratic` -- ``g*`` of continual dictionary
  learning, ``F*`` of the quadratic general-bilevel problem.

The certificates in detail: docs/references.md.
"""
