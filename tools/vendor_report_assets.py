"""Fetch the report's JavaScript and CSS into benchmark_utils/report/vendor/.

    python tools/vendor_report_assets.py

For each entry of ``benchmark_utils.report.offline.ASSETS``: ``npm pack``
its package at the pinned version from the npm registry (into a temporary
folder, nothing installed), copy the named file (a stylesheet with the
images it points to inlined as ``data:`` URIs, so that it needs no other
file), and the package's license into ``vendor/licenses/``; then write
``vendor/README.md`` with the versions, sources and SHA-256 of every file.
Needs ``npm`` and the network; run it only to change a version (the
files are committed).
"""
import base64
import hashlib
import mimetypes
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark_utils.report.offline import (  # noqa: E402
    ASSETS,
    CLOSERS,
    DROPPED,
    VENDOR,
)

CSS_URL = re.compile(r"""url\(\s*(["']?)([^"')]+)\1\s*\)""")


def npm_pack(spec, into):
    """Unpack ``spec`` (``name@version``) from the npm registry into
    ``into`` and return its ``package/`` folder."""
    tarball = subprocess.run(
        ["npm", "pack", spec, "--pack-destination", str(into), "--silent"],
        check=True, capture_output=True, text=True).stdout.split()[-1]
    folder = into / tarball.removesuffix(".tgz")
    with tarfile.open(into / tarball) as archive:
        archive.extractall(folder, filter="data")
    return folder / "package"


def inline_css_images(css, folder):
    """``css`` with each relative ``url()`` replaced by a ``data:`` URI of
    the file it names (relative to ``folder``)."""
    def embed(match):
        target = match.group(2)
        if target.startswith(("data:", "#")):
            return match.group(0)
        path = (folder / target.split("?")[0].split("#")[0]).resolve()
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'url("data:{mime};base64,{data}")'
    return CSS_URL.sub(embed, css)


def main():
    if VENDOR.exists():
        shutil.rmtree(VENDOR)
    (VENDOR / "licenses").mkdir(parents=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        packages = {}
        for asset in ASSETS:
            if asset.npm not in packages:
                packages[asset.npm] = npm_pack(asset.npm, Path(tmp))
            package = packages[asset.npm]
            source = package / asset.path
            text = source.read_text(encoding="utf-8")
            kind = "style" if asset.file.endswith(".css") else "script"
            if kind == "style":
                text = inline_css_images(text, source.parent)
            if CLOSERS[kind].search(text):
                sys.exit(f"{asset.file}: holds </{kind} or <!--")
            (VENDOR / asset.file).write_text(text, encoding="utf-8")
            license_name = (asset.npm.lstrip("@").replace("/", "-")
                            + "-" + asset.license)
            shutil.copy(package / asset.license,
                        VENDOR / "licenses" / license_name)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            rows.append(f"| `{asset.file}` | `{asset.npm}` | `{asset.path}` "
                        f"| {asset.url} | `licenses/{license_name}` "
                        f"| {len(text.encode('utf-8')) // 1024} KiB "
                        f"| `{digest[:16]}` |")
            print(f"{asset.file}: {asset.npm} {asset.path}")
    dropped = [f"- {url}: {why}." for url, why in DROPPED.items()]
    (VENDOR / "README.md").write_text("\n".join([
        "# Vendored report assets",
        "",
        "Copies of the scripts and stylesheets that benchopt 1.10's HTML "
        "templates load from CDNs, at the versions they ask for, which "
        "`benchmark_utils/report/offline.py` inlines into every report "
        "page so that it renders offline (docs/report_offline.md).",
        "Written by `python tools/vendor_report_assets.py` (`npm pack` of "
        "each package from the npm registry; do not edit by hand). "
        "Stylesheets have their images inlined as `data:` URIs.",
        "",
        "| file | npm package | file in it | replaces | license "
        "| size | SHA-256 (first 16) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Versions that differ from the template's: Font Awesome 5.1.0 for "
        "5.0.10 (not on npm) and the jQuery UI smoothness theme 1.12.0 for "
        "1.12.1 (the themes package stops at 1.12.0).",
        "",
        "Links left out of the pages (nothing is lost):",
        "",
        *dropped,
        "",
    ]), encoding="utf-8")


if __name__ == "__main__":
    main()
