"""General-bilevel curves: stationarity (||grad F(x)|| without constraints
on x, the Frank-Wolfe gap with them), upper-level gap |F(x) - F*| (F(x)
where no F* is known) and inner distance ||y - y*(x)|| against samples,
gradient evaluations, Hessian-vector products and time (Kwon et al. 2023,
Abolfazli et al. 2023, Ji et al. 2021)."""
from benchmark_utils.report.curve_plot import (
    FamilyCurvePlot,
    family_curve_options,
)
from benchmark_utils.report.families import GENERAL


class Plot(FamilyCurvePlot):
    name = "general_curve"
    family = GENERAL
    options = family_curve_options(GENERAL)
