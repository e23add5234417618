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
newer than it.
"""
import io
import zipfile
from pathlib import Path

import numpy as np

from benchmark_utils.data.download import fetch

OMNIGLOT_URL = "https://github.com/brendenlake/omniglot/raw/master/python/"
OMNIGLOT_FILES = {"background": "images_background.zip",
                  "evaluation": "images_evaluation.zip"}
PREPARE_COMMAND = (
    'python -m benchopt prepare . -d "hyper_representation[source=omniglot]"')


def missing_files(folder):
    """The archive names absent from ``folder``."""
    folder = Path(folder)
    return [name for name in OMNIGLOT_FILES.values()
            if not (folder / name).exists()]


def missing_file_message(folder):
    missing = missing_files(folder)
    urls = ", ".join(OMNIGLOT_URL + name for name in missing)
    return (f"The Omniglot archives {missing} are missing from "
            f"{Path(folder)}. Run `{PREPARE_COMMAND}` to download them, or "
            f"download {urls} and place them in {Path(folder)}.")


def download_omniglot(folder):
    """Download the missing archives into ``folder`` (idempotent); a failed
    download leaves no file and raises ``OSError`` naming the URL, the
    folder and how to place the files by hand."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in missing_files(folder):
        try:
            fetch(OMNIGLOT_URL + name, folder / name)
        except OSError as error:
            raise OSError(f"could not download Omniglot: {error}\nRetry "
                          f"`{PREPARE_COMMAND}`, or "
                          + missing_file_message(folder)) from error
    return folder


def read_archive(path, side=28):
    """(images (n, 1, side, side) float32 in [0, 1], labels (n,) int64) of
    one archive; labels number the characters in sorted path order."""
    from PIL import Image
    images, classes = [], []
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist()
                       if n.lower().endswith(".png"))
        for name in names:
            parts = Path(name).parts
            if len(parts) < 3:
                raise ValueError(f"{path}: {name} is not in an "
                                 "<alphabet>/<character>/ folder")
            with Image.open(io.BytesIO(archive.read(name))) as image:
                small = image.convert("L").resize((side, side),
                                                  Image.Resampling.BOX)
            images.append(1.0 - np.asarray(small, dtype=np.float32) / 255.0)
            classes.append(parts[-3] + "/" + parts[-2])
    if not images:
        raise ValueError(f"{path} holds no PNG image")
    _, labels = np.unique(np.array(classes), return_inverse=True)
    return np.stack(images)[:, None], labels.astype(np.int64)


def load_omniglot(folder, side=28):
    """((background images, labels), (evaluation images, labels)) from the
    archives in ``folder`` (module doc). Raises ``FileNotFoundError``
    naming the URLs and the folder when an archive is missing."""
    folder = Path(folder)
    if missing_files(folder):
        raise FileNotFoundError(missing_file_message(folder))
    cache = folder / f"omniglot_{side}.npz"
    archives = [folder / name for name in OMNIGLOT_FILES.values()]
    if cache.exists() and all(cache.stat().st_mtime >= a.stat().st_mtime
                              for a in archives):
        with np.load(cache) as data:
            return ((data["background_images"], data["background_labels"]),
                    (data["evaluation_images"], data["evaluation_labels"]))
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
