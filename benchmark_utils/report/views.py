"""The dataset a saved view opens on.

A view of config.yml names a chart type, a metric and an x-axis, not a
dataset: benchopt's page then shows the dataset on screen, which until one
is chosen is the first of the chart type's dataset menu, in alphabetical
order (``coreset_toy`` in a plain run). The views that reproduce one
application's figure open on that application's dataset
(:data:`VIEW_DATASETS`, as docs/report.md says): when a run's page is
finished (:mod:`.finish`), each of these views gets the first entry of its
chart type's dataset menu that is an instance of its dataset (a label
``hyper_cleaning`` or ``hyper_cleaning[...]``), or the menu's first entry
where the run has no instance of it. A view that names a dataset already
is left as it is; the other views keep the dataset on screen.
"""
import json
import re

# the views of config.yml that show one application, and its dataset:
# Kwon et al. 2023, Fig. 2, and Huang et al. 2021, Fig. 1, both data
# hyper-cleaning (validation loss, test accuracy)
VIEW_DATASETS = {
    "general: upper gap or value vs time": "hyper_cleaning",
    "task metric vs samples": "hyper_cleaning",
    "task metric vs time": "hyper_cleaning",
}
METADATA = "window.metadata = "
OPTION = re.compile(r'<option value="([^"]*)"')


class PageFormatError(ValueError):
    """A run page without the data or the metadata this package reads."""


def page_json(page, marker, module):
    """``(value, start, end)``: the JSON value after ``marker`` in the run
    page ``page`` and where it lies; PageFormatError naming ``module`` (the
    reader to update) where the page has no ``marker``."""
    start = page.find(marker)
    if start < 0:
        raise PageFormatError(
            f"a run page without {marker.strip()}: benchmark_utils/report/"
            f"{module} needs an update for this benchopt version")
    start += len(marker)
    value, end = json.JSONDecoder().raw_decode(page, start)
    return value, start, end


def dataset_menu(page, kind):
    """The entries of the page's dataset menu of the chart type ``kind``
    (``[]`` if it has none)."""
    menu = re.search(rf'<select id="change_{re.escape(kind)}_dataset"'
                     r"[^>]*>(.*?)</select>", page, re.S)
    return OPTION.findall(menu.group(1)) if menu else []


def view_dataset(menu, dataset):
    """The entry of ``menu`` a view of ``dataset`` opens on (None for an
    empty menu)."""
    matching = [label for label in menu
                if label.split("[", 1)[0] == dataset]
    return (matching or menu or [None])[0]


def with_view_datasets(page):
    """The run page ``page`` with each view of :data:`VIEW_DATASETS`
    opening on its dataset (module doc)."""
    metadata, start, end = page_json(page, METADATA, "views.py")
    views = metadata.get("plot_configs") or {}
    for name, dataset in VIEW_DATASETS.items():
        view = views.get(name)
        if not isinstance(view, dict) or "plot_kind" not in view:
            continue
        key = f"{view['plot_kind']}_dataset"
        label = view_dataset(dataset_menu(page, view["plot_kind"]), dataset)
        if key not in view and label is not None:
            view[key] = label
    return page[:start] + json.dumps(metadata) + page[end:]
