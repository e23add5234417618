"""The application's own measure (test error, dictionary recovery rate,
test accuracy, matrix-completion error, coreset parameter error) against
samples and time, for every dataset that has one, both families."""
from benchmark_utils.report.curve_plot import (
    FamilyCurvePlot,
    family_curve_options,
)
from benchmark_utils.report.families import TASK


class Plot(FamilyCurvePlot):
    name = "task_curve"
    family = TASK
    options = family_curve_options(TASK)
