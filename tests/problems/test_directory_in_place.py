"""A directory where a data file should be (``mkdir -p data/...``) is
reported before any run as what it is, naming the path, how to remove it
and the ``benchopt prepare`` command, for every downloaded dataset."""
import pytest

from benchmark_utils.data.mnist import MNIST_FILES
from benchmark_utils.data.omniglot import OMNIGLOT_FILES
from benchmark_utils.data.regularization_selection import COVTYPE_FILE
from benchmark_utils.data.verify import CorruptDataError
from benchmark_utils.data.wikimath import WIKIMATH_FILENAME

from conftest import component

CASES = [
    ("hyper_cleaning", {"source": "mnist"}, "_mnist_dir",
     MNIST_FILES["train_images"]),
    ("hyper_representation", {"source": "omniglot"}, "_omniglot_dir",
     OMNIGLOT_FILES["background"]),
    ("regularization_selection", {"source": "covtype"}, "_data_dir",
     COVTYPE_FILE),
    ("regression", {"source": "wikimath"}, "_wikimath_path",
     WIKIMATH_FILENAME),
]


@pytest.mark.parametrize("name, params, location, file", CASES,
                         ids=[case[0] for case in CASES])
def test_a_directory_in_place_of_a_data_file_says_so(
        monkeypatch, tmp_path, name, params, location, file):
    Dataset = component("dataset", name)
    in_place = tmp_path / file
    in_place.mkdir(parents=True)
    folder = tmp_path if location != "_wikimath_path" else in_place
    monkeypatch.setattr(Dataset, location, lambda self: folder)
    with pytest.raises(CorruptDataError) as raised:
        Dataset.get_instance(**params).check_run_ready()
    message = str(raised.value)
    assert message.startswith(
        f"{in_place} is corrupt: a directory where the data file should be."
        f" Remove the directory (`rm -r {in_place}`) and run `")
    assert "benchopt prepare" in message
