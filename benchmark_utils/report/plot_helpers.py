"""Helpers shared by the custom plots in ``plots/``."""


def median_over_repetitions(df, column):
    """Median of ``column`` per stop_val over repetitions.

    Repetitions that stopped earlier (a timeout) are carried forward, as in
    benchopt's own objective_curve, so the median always uses every run.
    """
    table = df.pivot_table(index="stop_val", columns="idx_rep",
                           values=column, aggfunc="last").ffill()
    return table.median(axis=1)
