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
# the colours, most distinct first: each the farthest (CIEDE2000) from
# those before it on a grid of sRGB colours (steps of 15) of CIELAB
# lightness 25-80 and chroma >= 20 (no near-white, no grey), so the first
# n are as far apart as such a greedy choice gets: at least 27.6 units for
# 10, 21.0 for 21, 19.0 for 24 (the benchmark's general solvers), 16.6 for
# all 32. tab10, which benchopt's palette extends, has two at 16.2, and
# CIE76 (which the former palette spread) counts saturated magentas far
# apart that read alike (MRBO, VR-BiAdam, VRBO: 11.5 to 23 in CIEDE2000).
PALETTE = (
    "#0000d2", "#78d200", "#ff5a00", "#1ec3ff", "#004b0f", "#ff78ff",
    "#780f1e", "#967800", "#006978", "#786996", "#00a587", "#f02d69",
    "#f0b4b4", "#ffb44b", "#5a3c0f", "#0078ff", "#b4b4e1", "#4b8700",
    "#960078", "#96695a", "#b41eff", "#b4b487", "#004b87", "#d2000f",
    "#d2c300", "#69d2d2", "#1ee196", "#3c96a5", "#4b785a", "#b487a5",
    "#4b3c5a", "#c39678")
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


def assign_styles(labels, groups):
    """``{label: {"color", "marker"}}`` for ``labels`` (sorted), where each
    set of ``groups`` holds labels drawn in one figure (the solvers run on
    one dataset).

    A label takes the first colour of :data:`PALETTE` that no label of its
    groups has taken, so the curves of a figure get the palette's most
    distinct colours, and a solver keeps its colour in every figure of the
    run; labels that never share a figure may share a colour. The markers
    go in turn over the labels (neighbours differ); past 32 labels in one
    figure, a colour comes back with a marker its figure has not paired it
    with."""
    shared = {label: set() for label in labels}
    for group in groups:
        for label in group:
            shared[label] |= set(group) - {label}
    styles = {}
    for index, label in enumerate(labels):
        near = [styles[other] for other in shared[label] if other in styles]
        taken = {style["color"] for style in near}
        color = next((c for c in PALETTE if c not in taken),
                     PALETTE[index % len(PALETTE)])
        pairs = {(style["color"], style["marker"]) for style in near}
        turn = [MARKERS[(index + shift) % len(MARKERS)]
                for shift in range(len(MARKERS))]
        marker = next((m for m in turn if (color, m) not in pairs), turn[0])
        styles[label] = {"color": color, "marker": marker}
    return styles


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
