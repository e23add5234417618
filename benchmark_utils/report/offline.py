"""A report page that renders offline, as one file.

benchopt 1.10's templates load plotly.js, gridjs (and its theme) and
anime.js for a run's page, jQuery, jQuery UI, DataTables and Font Awesome
for the benchmark's page, all from CDNs: with no network the plots, tables
and filters are blank. :func:`inline_assets` replaces each such
``<script src>`` / stylesheet ``<link>`` by an inline ``<script>`` /
``<style>`` holding a copy of the same file, vendored under ``vendor/``
(:data:`ASSETS` says where each comes from; ``tools/vendor_report_assets.py``
fetches them again from the npm registry), drops the links that only
serve a web font or a connection hint (:data:`DROPPED`), and raises
:class:`OfflineReportError` on any other script or stylesheet still loaded
from the network. :mod:`.finish` runs it on every page benchopt writes.
"""
import functools
import re
from pathlib import Path
from typing import NamedTuple

VENDOR = Path(__file__).parent / "vendor"


class Asset(NamedTuple):
    """A file benchopt's templates load from ``url``, vendored as
    ``VENDOR / file`` from ``path`` in the npm package ``npm``, whose
    license file ``license`` is kept in ``VENDOR / "licenses"``."""
    url: str
    file: str
    npm: str
    path: str
    license: str


ASSETS = (
    # plotly.js exactly as benchopt asks for it: the Python plotly package
    # ships plotly.js 4, which no longer reads a title given as a string,
    # and benchopt's result.js gives every title so (axis and plot titles
    # vanish, checked in Chromium)
    Asset("https://cdn.plot.ly/plotly-2.12.1.min.js",
          "plotly-2.12.1.min.js", "plotly.js-dist-min@2.12.1",
          "plotly.min.js", "LICENSE"),
    Asset("https://cdn.jsdelivr.net/npm/gridjs@6.2.0/dist/gridjs.umd.js",
          "gridjs-6.2.0.umd.js", "gridjs@6.2.0", "dist/gridjs.umd.js",
          "LICENSE"),
    Asset("https://cdn.jsdelivr.net/npm/gridjs@6.2.0/dist/theme/"
          "mermaid.min.css",
          "gridjs-6.2.0-mermaid.min.css", "gridjs@6.2.0",
          "dist/theme/mermaid.min.css", "LICENSE"),
    Asset("https://cdnjs.cloudflare.com/ajax/libs/animejs/2.0.2/anime.min.js",
          "anime-2.0.2.min.js", "animejs@2.0.2", "anime.min.js",
          "LICENSE.md"),
    Asset("https://code.jquery.com/jquery-3.5.1.min.js",
          "jquery-3.5.1.min.js", "jquery@3.5.1", "dist/jquery.min.js",
          "LICENSE.txt"),
    Asset("https://cdnjs.cloudflare.com/ajax/libs/jqueryui/1.12.1/"
          "jquery-ui.min.js",
          "jquery-ui-1.12.1.min.js", "jquery-ui-dist@1.12.1",
          "jquery-ui.min.js", "LICENSE.txt"),
    # the themes package stops at 1.12.0; its images are inlined as data:
    Asset("https://ajax.googleapis.com/ajax/libs/jqueryui/1.12.1/themes/"
          "smoothness/jquery-ui.css",
          "jquery-ui-smoothness-1.12.0.min.css", "jquery-ui-themes@1.12.0",
          "themes/smoothness/jquery-ui.min.css", "LICENSE.txt"),
    Asset("https://cdn.datatables.net/1.10.22/js/jquery.dataTables.min.js",
          "jquery.dataTables-1.10.22.min.js", "datatables.net@1.10.22",
          "js/jquery.dataTables.min.js", "License.txt"),
    Asset("https://cdn.datatables.net/1.10.22/css/jquery.dataTables.min.css",
          "jquery.dataTables-1.10.22.min.css", "datatables.net-dt@1.10.22",
          "css/jquery.dataTables.min.css", "License.txt"),
    # 5.0.10 is not on npm; 5.1.0 is its first release there
    Asset("https://use.fontawesome.com/releases/v5.0.10/js/all.js",
          "fontawesome-free-5.1.0-all.js",
          "@fortawesome/fontawesome-free@5.1.0", "js/all.js", "LICENSE.txt"),
)

# network links left out, and why nothing is lost without them
DROPPED = {
    "https://fonts.googleapis.com": "a connection hint",
    "https://fonts.gstatic.com": "a connection hint",
    "https://fonts.googleapis.com/css2?family=Kanit:wght@300&display=swap":
        "a web font for the animated 'Benchopt' brand, which falls back to "
        "sans-serif",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/"
    "font-awesome.css":
        "Font Awesome 4's web font; Font Awesome 5's all.js, inlined, draws "
        "every fa, fas and fab icon as an SVG",
}

# a tag's attribute values may hold ">" (the pages' data: favicon does)
_ATTRS = r"""(?:[^>"']|"[^"]*"|'[^']*')*"""
SCRIPT_TAG = re.compile(rf"<script\b({_ATTRS})>\s*</script\s*>", re.I)
LINK_TAG = re.compile(rf"<link\b({_ATTRS})/?>", re.I)
ATTRIBUTE = re.compile(
    r"""([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?""")
NETWORK = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)
STYLE_BLOCK = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.I | re.S)
NETWORK_IN_CSS = re.compile(
    r"""@import\s*[^;]*|url\(\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//[^"')]*""",
    re.I)
# what would end an inline block early or open an HTML comment in a script
CLOSERS = {"script": re.compile(r"</script|<!--", re.I),
           "style": re.compile(r"</style", re.I)}


class OfflineReportError(RuntimeError):
    """A page would still load a script or stylesheet from the network."""


def attributes(tag_body):
    """``{name (lowercase): value}`` of a tag's attributes."""
    return {name.lower(): (value or "").strip("\"'")
            for name, value in ATTRIBUTE.findall(tag_body)}


@functools.lru_cache(maxsize=None)
def vendored(url):
    """``(asset, text)`` of the vendored copy of ``url`` (None if none)."""
    for asset in ASSETS:
        if asset.url == url:
            text = (VENDOR / asset.file).read_text(encoding="utf-8")
            kind = "style" if asset.file.endswith(".css") else "script"
            if CLOSERS[kind].search(text):
                raise OfflineReportError(
                    f"{asset.file} holds '</{kind}' or '<!--' and cannot "
                    f"be inlined")
            return asset, text
    return None


def _inline_script(match):
    attrs = attributes(match.group(1))
    url = attrs.get("src")
    if url is None or not NETWORK.match(url) or vendored(url) is None:
        return match.group(0)  # inline already, local, or left for the check
    asset, text = vendored(url)
    kind = f' type="{attrs["type"]}"' if "type" in attrs else ""
    return f'<script data-vendored="{asset.file}"{kind}>{text}</script>'


def _inline_link(match):
    attrs = attributes(match.group(1))
    url = attrs.get("href", "")
    if not NETWORK.match(url):
        return match.group(0)
    if url in DROPPED:
        return f"<!-- offline report: left out {DROPPED[url]} -->"
    found = vendored(url)
    if found is None or "stylesheet" not in attrs.get("rel", "").split():
        return match.group(0)
    asset, text = found
    return f'<style data-vendored="{asset.file}">{text}</style>'


def network_loads(html):
    """The scripts, stylesheets and other resources (anything a
    ``<script src>`` or ``<link href>`` loads, CSS ``@import`` or ``url()``)
    that ``html`` would fetch from the network; links (``<a href>``) are
    not loads."""
    found = []
    for match in SCRIPT_TAG.finditer(html):
        src = attributes(match.group(1)).get("src", "")
        if NETWORK.match(src):
            found.append(src)
    for match in LINK_TAG.finditer(html):
        href = attributes(match.group(1)).get("href", "")
        if NETWORK.match(href):
            found.append(href)
    for match in STYLE_BLOCK.finditer(html):
        found += [f"CSS {hit.group(0)}"
                  for hit in NETWORK_IN_CSS.finditer(match.group(1))]
    return found


def inline_assets(html):
    """``html`` with every CDN script and stylesheet inlined from
    ``vendor/`` and the links of :data:`DROPPED` left out; raises
    :class:`OfflineReportError` if it would still load anything from the
    network."""
    html = SCRIPT_TAG.sub(_inline_script, html)
    html = LINK_TAG.sub(_inline_link, html)
    left = network_loads(html)
    if left:
        raise OfflineReportError(
            "the report would still load from the network, with no vendored "
            "copy: " + ", ".join(left) + ". Add each to ASSETS (or DROPPED) "
            "in benchmark_utils/report/offline.py and run "
            "tools/vendor_report_assets.py.")
    return html
