"""The tuning protocol (README, "Tuning"): per-solver grids over the
role-named steps (``grids``), their centres resolved on the problem
(``defaults``, ``plan``), benchopt runs at an iteration budget
(``runner``), upper-level scores and selection (``scoring``), the grid
grown until each choice is finished (``search``), and the tuned
config and score table (``config_io``, ``report``). Entry point:
``python -m benchmark_utils.tune`` (``cli``)."""
