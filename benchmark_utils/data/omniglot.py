"""Omniglot (Lake, Salakhutdinov, Tenenbaum, Science 2015) from its original
archives: download and reader.

The two archives of the authors' repository, ``images_background.zip``
(964 characters of 30 alphabets, the meta-training classes of the few-shot
literature) and ``images_evaluation.zip`` (659 characters of 20 alphabets,
the meta-test classes), are fetched once by ``benchopt prepare`` into
``get_data_path("omniglot")``. Each holds
``<archive name>/<alphabet>/<character>/<drawing>.png``: 20 binary
105 x 105 drawings per character, black strokes on white.

``load_omniglot`` reads them with Pillow: a character (alphabet, character
folder) is a class; images are downscaled to ``side`` x ``side`` (28 by
default, as in the few-shot literature; Vinyals et al. 2016) by box
averaging and inverted so that strokes are 1 and the background 0. The
decoded arrays are cached next to the archives (``omniglot_<side>.npz``) so
that later runs skip the decoding; the cache is rebuilt when an archive is
newer than it, or unreadable.

Checks (see :mod:`benchmark_utils.data.verify`): ``prepare`` downloads again
a present archive whose size or SHA-256 is not the published one
(:data:`OMNIGLOT_PUBLISHED`), :func:`missing_files` (the dataset's run-list
check) rejects it, and the reader rejects an archive that is not a zip, a
member whose CRC fails, a PNG it cannot decode or files outside the
``<archive name>/`` folder; each with a ``CorruptDataError`` naming the
archive and the prepare command.
"""
import io
import zipfile
from pathlib import Path

import numpy as np

from benchmark_utils.data.download import refresh
from benchmark_utils.data.verify import (
    CorruptDataError,
    Published,
    absent_files,
    checked_missing_files,
)

OMNIGLOT_URL = "https://github.com/brendenlake/omniglot/raw/master/python/"
OMNIGLOT_FILES = {"background": "images_background.zip",
                  "evaluation": "images_evaluation.zip"}
# sizes and SHA-256 of tensorflow-datasets' url_checksums/omniglot.txt (its
# values for the repository's two small archives match their git blobs)
OMNIGLOT_PUBLISHED = {
    "images_background.zip": Published(9464212, "ad41ab679c8b5d90b271ef46be"
                                       "6987cc81211774a695c29dcc5367b2b26ee"
                                       "640"),
    "images_evaluation.zip": Published(6462886, "1f61a8f3366785b057fc117d92"
                                       "28e78a16e3d976c8953b2a10fcc74cf0609"
                                       "cee"),
}
PREPARE_COMMAND = (
    'python -m benchopt prepare . -d "hyper_representation[source=omniglot]"')


def missing_files(folder):
    """The archive names absent from ``folder``, after checking those
    present (:func:`~benchmark_utils.data.verify.checked_missing_files`)."""
    return checked_missing_files(folder, OMNIGLOT_PUBLISHED, PREPARE_COMMAND)


def _absent(folder):
    return absent_files(folder, OMNIGLOT_FILES.values())


def missing_file_message(folder, missing=None):
    missing = _absent(folder) if missing is None else missing
    urls = ", ".join(OMNIGLOT_URL + name for name in missing)
    return (f"The Omniglot archives {missing} are missing from "
            f"{Path(folder)}. Run `{PREPARE_COMMAND}` to download them, or "
            f"download {urls} and place them in {Path(folder)}.")


def download_omniglot(folder, verify_published=True):
    """Download the missing archives into ``folder`` (idempotent), and
    again any present one whose size or SHA-256 is not the published one
    (``verify_published=False``: no check, of downloads or present files).
    A failed download leaves no new file and raises ``OSError`` naming the
    URL, the folder, how to place the files by hand, and a present archive
    found corrupt."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in OMNIGLOT_FILES.values():
        refresh(folder / name, [OMNIGLOT_URL + name],
                published=(OMNIGLOT_PUBLISHED[name] if verify_published
                           else None), what="Omniglot",
                recovery=f"Delete any corrupt archive and retry "
                f"`{PREPARE_COMMAND}`, or "
                + missing_file_message(folder, [name]))
    return folder


def read_archive(path, side=28):
    """(images (n, 1, side, side) float32 in [0, 1], labels (n,) int64) of
    one archive; labels number the characters in sorted path order. A
    damaged archive raises ``CorruptDataError`` naming it and the prepare
    command (module doc)."""
    try:
        return _read_archive(Path(path), side)
    except zipfile.BadZipFile as error:    # also a member's failed CRC
        problem = (f"not an intact zip archive ({error})"
                   if "CRC" in str(error) else
                   "not a zip archive (truncated, or another file such as a "
                   "web page)")
    except (EOFError, OSError) as error:
        problem = f"not a readable zip archive ({error})"
    raise CorruptDataError(path, problem, PREPARE_COMMAND)


def _read_archive(path, side):
    from PIL import Image
    from PIL import UnidentifiedImageError as UnidentifiedImage
    images, classes = [], []
    with zipfile.ZipFile(path) as archive:
        top = path.stem + "/"       # images_background/<alphabet>/...
        outside = [n for n in archive.namelist() if not n.startswith(top)]
        if outside:
            raise CorruptDataError(
                path, f"holds {outside[0]!r}, outside the {top} folder of "
                "the Omniglot archive", PREPARE_COMMAND)
        names = sorted(n for n in archive.namelist()
                       if n.lower().endswith(".png"))
        for name in names:
            parts = Path(name).parts
            if len(parts) < 3:
                raise CorruptDataError(
                    path, f"{name} is not in an <alphabet>/<character>/ "
                    "folder", PREPARE_COMMAND)
            data = archive.read(name)       # BadZipFile on a failed CRC
            try:
                with Image.open(io.BytesIO(data)) as image:
                    small = image.convert("L").resize((side, side),
                                                      Image.Resampling.BOX)
            except (OSError, SyntaxError, ValueError) as error:
                why = ("not an image" if isinstance(error, UnidentifiedImage)
                       else error)
                raise CorruptDataError(
                    path, f"member {name} is not a readable PNG ({why})",
                    PREPARE_COMMAND) from None
            images.append(1.0 - np.asarray(small, dtype=np.float32) / 255.0)
            classes.append(parts[-3] + "/" + parts[-2])
    if not images:
        raise CorruptDataError(path, "holds no PNG image", PREPARE_COMMAND)
    _, labels = np.unique(np.array(classes), return_inverse=True)
    return np.stack(images)[:, None], labels.astype(np.int64)


def load_omniglot(folder, side=28):
    """((background images, labels), (evaluation images, labels)) from the
    archives in ``folder`` (module doc). Raises ``FileNotFoundError``
    naming the URLs and the folder when an archive is missing, and
    ``CorruptDataError`` (a ValueError) naming the archive and the prepare
    command when one is damaged (the published checksums are
    :func:`missing_files`'s, before any run: the tests' fixtures have
    none)."""
    folder = Path(folder)
    if _absent(folder):
        raise FileNotFoundError(missing_file_message(folder))
    cache = folder / f"omniglot_{side}.npz"
    archives = [folder / name for name in OMNIGLOT_FILES.values()]
    if cache.exists() and all(cache.stat().st_mtime >= a.stat().st_mtime
                              for a in archives):
        try:
            with np.load(cache) as data:
                return ((data["background_images"],
                         data["background_labels"]),
                        (data["evaluation_images"],
                         data["evaluation_labels"]))
        except (OSError, ValueError, KeyError, EOFError,
                zipfile.BadZipFile):
            pass        # a damaged cache: decode the archives again
    out = [read_archive(path, side) for path in archives]
    arrays = {}
    for split, (images, labels) in zip(OMNIGLOT_FILES, out, strict=True):
        arrays[split + "_images"], arrays[split + "_labels"] = images, labels
    try:
        tmp = cache.with_suffix(".part.npz")
        np.savez(tmp, **arrays)
        tmp.replace(cache)
    except OSError:
        pass        # a read-only data folder: decode again next time
    return tuple(out)
