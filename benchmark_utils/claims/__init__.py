"""The statistics the verdicts of docs/results.md rest on: two methods'
per-seed final values compared by one stated rule, corrected for the
number of verdicts per paper, with its false-positive rate measured
(``stats``), and the value a run's curve reaches at a given budget in
samples, time, oracle calls or iterations (``curves``)."""
