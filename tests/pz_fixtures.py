"""A small p_z run built once per test process, handed to each test as a copy: two
works cut into windows (20-token prefix, 10-token suffix, stride 5) scored by a tiny
Llama half-trained on the first (greedy hits there, probabilities between 0 and 1),
under greedy, top-40 and plain sampling."""

from __future__ import annotations

from pathlib import Path

from copyaudit.cli.main import main
from copyaudit.engine.pz_run import PzRequest, execute_pz
from tests.process_cache import copy_database, scratch_folder
from tests.tinymodels import (
    PASSAGE_LIGHTHOUSE,
    PASSAGE_ORCHARD,
    build_tiny_causal_lm,
    build_tokenizer,
    train_to_memorize,
)

SUITE = "works"
RUN = "works-pz"
SCHEMES = ("greedy", "topk", "sampling")
_TEMPLATE: list[Path] = []


def _build(folder: Path) -> Path:
    model = folder / "model"
    build_tiny_causal_lm(model, build_tokenizer([PASSAGE_LIGHTHOUSE, PASSAGE_ORCHARD], model))
    train_to_memorize(model, [PASSAGE_LIGHTHOUSE[:300]], steps=40)
    works = folder / "works"
    works.mkdir()
    (works / "lighthouse.txt").write_text(PASSAGE_LIGHTHOUSE, encoding="utf-8")
    (works / "orchard.txt").write_text(PASSAGE_ORCHARD, encoding="utf-8")
    db = folder / "pz.db"
    main(["--db", str(db), "import", "extraction", str(works), "--suite", SUITE,
          "--prefix-tokens", "20", "--continuation-tokens", "10", "--stride", "5",
          "--tokenizer", str(model)])  # fmt: skip
    request = PzRequest(
        suite=SUITE, name=RUN, model=str(model), device="cpu", dtype="float32", schemes=SCHEMES
    )
    outcome = execute_pz(db, request)
    assert outcome.status == "done", outcome.error
    return db


def copy_pz_db(path: Path) -> Path:
    """A copy of the p_z run's database at `path` (built at the first call)."""
    if not _TEMPLATE:
        _TEMPLATE.append(_build(scratch_folder("pz-map")))
    return copy_database(_TEMPLATE[0], path)


def model_dir() -> Path:
    """The tiny model the run was scored with (after copy_pz_db)."""
    return _TEMPLATE[0].parent / "model"
