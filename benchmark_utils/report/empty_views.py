"""Chart types without data leave a run's page.

benchopt draws every plot of config.yml for every run, and its page needs
a figure for each: where a run has no dataset of a family (only general
problems, say), that family's plots offer one dataset, ``none``, whose
figures say so (``plot_helpers.NO_DATASET``). A reader would find chart
types and saved views that show an empty figure titled "none". When a
run's page is finished (:mod:`.finish`), every chart type none of whose
figures has data (:func:`has_data`) leaves the page's chart-type menus,
and so do the saved views that open it (their tabs and their entries of
the page's metadata); the page then opens on what is left. Its figures
stay in the page's data, unreachable, and so do its option menus, which
the page reads when it opens (benchopt's result page). A page where no
chart type has data keeps them all. The ``--no-html`` figures skip a figure
without data (:func:`.finish.write_figures`).
"""
import html
import json
import re

from benchmark_utils.report.views import METADATA, page_json

PLOTS = "window._plots = "
KIND_MENU = re.compile(r'(<select id="plot_kind"[^>]*>)(.*?)(</select>)', re.S)
VIEW_MENU = re.compile(r'(<select id="tabs"[^>]*>)(.*?)(</select>)', re.S)


def has_data(figure):
    """Whether a figure of benchopt's plot data shows data: a scatter
    figure a curve with a point (not only the curve whose legend says why
    there is none, ``plot_helpers.message_curves``), another a row or an
    item."""
    if figure.get("type") == "scatter":
        return any(len(curve.get("x", ())) for curve in figure["data"])
    return bool(figure.get("data"))


def empty_kinds(plots):
    """The chart types of ``plots`` (``{kind: {key: figure}}``) with no
    figure that has data."""
    return [kind for kind, figures in plots.items()
            if not any(has_data(figure) for figure in figures.values())]


def without_empty_kinds(page):
    """The run page ``page`` without its chart types that have no data,
    nor the saved views that open them (module doc)."""
    plots = page_json(page, PLOTS, "empty_views.py")[0]
    empty = empty_kinds(plots)
    if not empty or len(empty) == len(plots):
        return page
    metadata, start, end = page_json(page, METADATA, "empty_views.py")
    views = metadata.get("plot_configs") or {}
    dropped = [name for name, view in views.items()
               if isinstance(view, dict) and view.get("plot_kind") in empty]
    for name in dropped:
        del views[name]
    page = page[:start] + json.dumps(metadata) + page[end:]
    page = _without_options(page, KIND_MENU, empty)
    page = _without_options(page, VIEW_MENU, dropped)
    for name in dropped:
        page = re.sub(r'<span onclick="setConfig\(this\)"[^>]*>\s*'
                      + _either(name) + r"\s*</span>\s*", "", page)
    return page


def _without_options(page, menu, values):
    """``page`` with no ``<option value="v">`` of ``values`` in the menus
    that ``menu`` matches."""
    if not values:
        return page
    option = re.compile(r'<option value="(?:' + "|".join(
        _either(value) for value in values) + r')"[^>]*>.*?</option>\s*',
        re.S)
    return menu.sub(lambda match: match.group(1)
                    + option.sub("", match.group(2)) + match.group(3), page)


def _either(text):
    """A pattern of ``text`` as benchopt's page writes it, raw or
    escaped."""
    return "(?:" + re.escape(text) + "|" + re.escape(html.escape(text)) + ")"
