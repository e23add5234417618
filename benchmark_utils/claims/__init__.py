"""The statistics the verdicts of docs/results.md rest on: two methods'
per-seed final values compared by one stated rule (a smallest
difference that matters, parity by a non-inferiority test), corrected
over each experiment's family of verdicts, with its error rates measured
(``stats``), the verdicts and the check that both methods work
(``verdicts``), and the value a run's curve reaches at a given budget in
samples, time, oracle calls or iterations (``curves``)."""
