"""Bad dataset parameters fail in the dataset's checks (run by ``get_data``
first, and for every instance of a ``benchopt run`` before the first run:
no download, no reference solve) with a ValueError that names the
parameter."""
import pytest

from conftest import component

BAD_PARAMETERS = [
    ("regression", {"radius": 0.0}, "radius"),
    ("regression", {"radius": -1.0}, "radius"),
    ("regression", {"source": "mnist"}, "source"),
    ("regression", {"loss": "huber"}, "loss"),
    ("regression", {"n_samples": 2}, "n_samples"),
    # 50 training rows (the first third) for 50 features: one minimizer
    ("regression", {"n_samples": 150, "n_features": 50},
     "n_features must be > n_train = ceil\\(n_samples / 3\\) = 50"),
    ("dictionary_learning", {"delta": 0.0}, "delta"),
    ("dictionary_learning", {"n_old_atoms": 60}, "n_old_atoms"),
    ("dictionary_learning", {"n_samples": 0}, "n_samples"),
    ("hyper_cleaning", {"corruption": 1.0}, "corruption"),
    ("hyper_cleaning", {"corruption": -0.1}, "corruption"),
    ("hyper_cleaning", {"c": 0.0}, "c must"),
    ("hyper_cleaning", {"c": -1.0}, "c must"),
    ("hyper_cleaning", {"source": "cifar10"}, "source"),
    ("hyper_cleaning", {"n_train": 0}, "n_train"),
    ("hyper_cleaning", {"n_val": -5}, "n_val"),
    ("hyper_cleaning", {"n_test": 0}, "n_test"),
    ("hyper_cleaning", {"reduction": "median"}, "reduction"),
    ("hyper_cleaning", {"n_train": 1500, "n_val": 400},
     "n_train \\+ n_val \\+ n_test"),
    ("hyper_cleaning", {"source": "mnist", "n_test": 20000}, "n_test"),
    ("matrix_completion", {"n": 0}, "n must"),
    ("matrix_completion", {"n": "abc"}, "n must"),
    ("matrix_completion", {"p_observed": None}, "p_observed"),
    ("matrix_completion", {"rank": 30, "n": 20}, "rank"),
    ("matrix_completion", {"noise": 1.0}, "noise"),
    ("matrix_completion", {"p_observed": 0.0}, "p_observed"),
    ("matrix_completion", {"delta": 0.0}, "delta"),
    ("matrix_completion", {"lambda1": -0.1}, "lambda1"),
    ("matrix_completion", {"lambda2": 0.0}, "lambda2"),
    ("matrix_completion", {"split": "halves"}, "split"),
    ("matrix_completion", {"reduction": "total"}, "reduction"),
    ("matrix_completion", {"random_state": -1}, "random_state"),
    ("quadratic", {"mu": 0.0}, "mu must be a finite number > 0"),
    ("quadratic", {"mu": -1.0}, "mu must be a finite number > 0"),
    ("quadratic", {"mu": 6.0, "L": 5.0}, "mu must be <= L"),
    ("quadratic", {"constraint": "l1_ball"}, "constraint must be one of"),
    ("quadratic", {"radius": 0.0}, "radius must be a finite number > 0"),
    ("quadratic", {"radius": -2.0}, "radius"),
    ("quadratic", {"noise": 1.0}, r"noise must be in \[0.0, 1.0\)"),
    ("quadratic", {"noise": -0.1}, "noise"),
    ("quadratic", {"n_samples": 0}, "n_samples must be an integer"),
    ("quadratic", {"dim_x": 0}, "dim_x"),
    ("quadratic", {"dim_y": 2.5}, "dim_y"),
    ("quadratic", {"cross_norm": 0.0}, "cross_norm"),
    ("quadratic", {"upper_reg": 0.0}, "upper_reg"),
    ("quadratic", {"random_state": -1}, "random_state"),
    ("coreset_toy", {"mu_g": 0.0}, "mu_g"),
    ("coreset_toy", {"mu_g": 1.0, "L_g": 0.5}, "L_g"),
    ("coreset_toy", {"L_g": "abc"}, "L_g"),
    ("hyper_cleaning", {"corruption": "abc"}, "corruption must be"),
    ("regression", {"noise": None}, "noise"),
    ("dictionary_learning", {"n_init_iter": 2.5}, "n_init_iter"),
]


@pytest.mark.parametrize("name, params, match", BAD_PARAMETERS)
def test_bad_dataset_parameters_are_rejected_before_get_data(name, params,
                                                             match):
    with pytest.raises(ValueError, match=match):
        component("dataset", name).get_instance(**params).check_parameters()


@pytest.mark.parametrize("name", ["regression", "dictionary_learning",
                                  "hyper_cleaning", "matrix_completion",
                                  "quadratic", "coreset_toy",
                                  "regularization_selection"])
def test_default_parameters_are_accepted(name):
    component("dataset", name).get_instance().check_parameters()


@pytest.mark.parametrize("name, source, attribute", [
    ("regression", "wikimath", "_wikimath_path"),
    ("hyper_cleaning", "mnist", "_mnist_dir"),
    ("regularization_selection", "ijcnn1", "_data_dir"),
    ("regularization_selection", "covtype", "_data_dir")])
def test_a_run_needs_the_downloaded_files(name, source, attribute,
                                          monkeypatch, tmp_path):
    # building the dataset needs no file (``benchopt prepare`` builds it
    # before it downloads); a run checks for them up front, and the message
    # gives the exact prepare command
    Dataset = component("dataset", name)
    missing = tmp_path / "missing"
    monkeypatch.setattr(Dataset, attribute, lambda self: missing)
    dataset = Dataset.get_instance(source=source)
    with pytest.raises(FileNotFoundError,
                       match=rf'benchopt prepare . -d "{name}\[source='
                             rf'{source}\]"'):
        dataset.check_run_ready()
    Dataset.get_instance().check_run_ready()     # the default needs none
