"""A solver's colour and marker: one mapping for both renderers.

The custom plots give each curve a colour of :data:`PALETTE` and a marker
of :data:`MARKERS`, a plotly symbol number, which the HTML report draws as
it is. benchopt hands the same number to matplotlib (``--no-html``) as an
index into matplotlib's list of markers, another shape (plotly's diamond,
2, is matplotlib's circle, ``o``), so the finished figures
(:func:`benchmark_utils.report.finish.write_figures`) first take the
matplotlib marker of the same shape (:func:`matplotlib_markers`):
:data:`SHAPES` pairs them, so a solver has one colour and one marker
symbol in the HTML and in the PDFs.
"""
# a solver's colour, the same in every figure of a run
# (plot_helpers.solver_styles): 32 colours (the benchmark has 31 solvers),
# tab10's first, then each the farthest from those before it on a grid of
# sRGB colours of CIELAB lightness 30-75 and chroma >= 25 (no near-white,
# no black, no second grey or dull brown), at least 27 CIE76 units apart
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#0000ff", "#ff1aff",
    "#004de6", "#404d00", "#ff0080", "#a6bf80", "#f2a673", "#8c00a6",
    "#8c0d4d", "#00cc99", "#007359", "#f27380", "#994d00", "#b3b3e6",
    "#594066", "#408cff", "#ff26bf", "#e673ff", "#00cc00", "#9940ff",
    "#998026", "#e6a600")
# the 10 marker shapes, in the order solvers take them: (plotly symbol
# number, matplotlib marker) of the same filled shape
SHAPES = (
    (0, "o"),    # circle
    (1, "s"),    # square
    (2, "D"),    # diamond
    (5, "^"),    # triangle-up
    (6, "v"),    # triangle-down
    (4, "X"),    # x
    (3, "P"),    # cross (a plus)
    (17, "*"),   # star
    (13, "p"),   # pentagon
    (7, "<"),    # triangle-left
)
MARKERS = tuple(symbol for symbol, _ in SHAPES)
MATPLOTLIB_MARKER = dict(SHAPES)


def style_of(index):
    """The colour and marker of the ``index``-th solver of a run: the
    colours in turn, and the markers in turn (past 32 solvers, a colour
    comes back with another marker)."""
    colors, markers = len(PALETTE), len(MARKERS)
    return {"color": PALETTE[index % colors],
            "marker": MARKERS[(index + index // colors) % markers]}


def matplotlib_markers(plot_data):
    """benchopt's figures ``plot_data`` (``{plot: {key: figure}}``) for
    matplotlib: each curve's marker of :data:`MARKERS` replaced, in place,
    by the matplotlib marker of the same shape; returns ``plot_data``."""
    for figures in plot_data.values():
        for figure in figures.values():
            curves = [c for c in figure.get("data", ())
                      if isinstance(c, dict)]   # a table's rows are lists
            for curve in curves:
                marker = curve.get("marker")
                if isinstance(marker, int) and marker in MATPLOTLIB_MARKER:
                    curve["marker"] = MATPLOTLIB_MARKER[marker]
    return plot_data
