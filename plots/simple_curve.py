"""Simple-bilevel curves: lower-level gap g(x) - g* and upper-level gap
|f(x) - f*| (the upper value where no f* is certified) against samples,
gradient evaluations, LMO calls and time (Cao et al. 2023, Giang-Tran et
al. 2025)."""
from benchmark_utils.report.curve_plot import (
    FamilyCurvePlot,
    family_curve_options,
)
from benchmark_utils.report.families import SIMPLE


class Plot(FamilyCurvePlot):
    name = "simple_curve"
    family = SIMPLE
    options = family_curve_options(SIMPLE)
