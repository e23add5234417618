"""benchopt's result cache invalidates when the shared code changes: a
solver's cache key carries the digest of benchmark_utils
(benchmark_utils/code_digest.py), not only its own file's md5."""
import joblib

from benchmark_utils.code_digest import shared_code_digest
from benchmark_utils.solvers import base

from conftest import component


def test_the_digest_follows_every_shared_file_and_tuned_table(tmp_path):
    (tmp_path / "benchmark_utils" / "topic").mkdir(parents=True)
    (tmp_path / "configs" / "tuned").mkdir(parents=True)
    module = tmp_path / "benchmark_utils" / "topic" / "module.py"
    table = tmp_path / "configs" / "tuned" / "default_toy.yml"
    module.write_text("STEP = 0.1\n")
    table.write_text("solver: [SOBA[outer_step=0.1]]\n")
    digests = [shared_code_digest.__wrapped__(tmp_path)]
    module.write_text("STEP = 0.2\n")
    digests.append(shared_code_digest.__wrapped__(tmp_path))
    table.write_text("solver: [SOBA[outer_step=0.2]]\n")
    digests.append(shared_code_digest.__wrapped__(tmp_path))
    assert len(set(digests)) == 3


def test_an_edit_of_the_shared_code_changes_a_solvers_cache_key(monkeypatch):
    solver = component("solver", "SOBA").get_instance()
    assert solver._get_state()["shared_code"] == shared_code_digest()
    before = joblib.hash(solver)
    assert joblib.hash(component("solver", "SOBA").get_instance()) == before
    monkeypatch.setattr(base, "shared_code_digest", lambda: "edited")
    assert joblib.hash(solver) != before


def test_a_solver_survives_the_round_trip_of_its_state():
    solver = component("solver", "SOBA").get_instance(batch_size=8)
    rebuilt = solver.__reduce__()
    copy = rebuilt[0](*rebuilt[1])
    copy.__setstate__(rebuilt[2])
    assert copy.batch_size == 8
