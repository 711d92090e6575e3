"""The demo's memorisation map (issue 37): one public-domain work of the literal samples
cut into token windows and scored for p_z by the embedded SmolLM2-135M-Instruct, so that
the app opens with a p_z run to look at.

The windows are short (16-token prefix, 8-token continuation, every 4 tokens: 318
windows of the sample passages of *Alice's Adventures in Wonderland*, each token in two
continuations) because the demo scores them on a CPU: 100-token windows (50 + 50) cost
about 1 CPU second each there, and a few hundred of them would add minutes to the demo.
The cutting is recorded with every window, as `import extraction --stride` records it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.engine.demo import samples_dir
from copyaudit.engine.demo_library import sample_works
from copyaudit.engine.pz_run import PzOutcome, PzRequest, execute_pz
from copyaudit.errors import UserError
from copyaudit.records import LocatedCase
from copyaudit.runs.progress import ProgressCallback, announce
from copyaudit.studies.extraction.windows import KIND, Cutting, cut_windows, tokenizer_digest
from db import Store
from db.cases import import_cases
from db.runs import run_row

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

WORK = "Alice's Adventures in Wonderland"
PREFIX_TOKENS, CONTINUATION_TOKENS, STRIDE = 16, 8, 4
SUITE = "alice-windows"
# the CPU and float32, as the takedown demo: the same figures on every machine
REQUEST = PzRequest(
    suite=SUITE, name=f"embedded-pz-{SUITE}", device="cpu", dtype="float32", batch_size=64
)


def work_windows(root: Path, tokenizer: PreTrainedTokenizerBase) -> Iterator[LocatedCase]:
    """WORK's sample passages (as the demo's library joins them) cut into windows."""
    texts = {title: text for title, _, text in sample_works(root)}
    cutting = Cutting(
        PREFIX_TOKENS, CONTINUATION_TOKENS, STRIDE, REQUEST.model, tokenizer_digest(tokenizer)
    )
    cases = cut_windows(WORK, texts[WORK], tokenizer, cutting)
    return (LocatedCase(n, c) for n, c in enumerate(cases, start=1))


def _is_done(db_path: Path) -> bool:
    with Store(db_path) as store:
        try:
            return str(run_row(store, REQUEST.run_name())["status"]) == "done"
        except UserError:  # not run yet
            return False


def build_pz_demo(
    db_path: Path,
    root: Path | None = None,
    on_progress: ProgressCallback | None = None,
    scorer: Any = None,
) -> PzOutcome | None:
    """Import the windows (once) and score those the run lacks with `scorer` (default:
    the embedded model on the CPU, loaded only when some are left); None when the run
    was already done. Safe to repeat."""
    from copyaudit.models.tokenizer_loading import load_tokenizer  # deferred: transformers

    root = root or samples_dir()
    tokenizer = scorer.loaded.tokenizer if scorer is not None else load_tokenizer(REQUEST.model)
    announce(on_progress, SUITE, "load", f"demo: cutting {WORK} into p_z windows")
    with Store(db_path) as store:
        import_cases(store, SUITE, KIND, work_windows(root, tokenizer), source=f"samples: {WORK}")
    if _is_done(db_path):
        return None
    return execute_pz(db_path, REQUEST, on_progress=on_progress, scorer=scorer)
