"""``python -m benchmark_utils.compare SOLVER``: a researcher's own solver
taken through the benchmark's protocol (tuned, run on the evaluation
seeds, decided against every method of the papers' experiments), into an
output folder; nothing shipped changes (benchmark_utils/compare/__main__.py).
"""
