"""The demo's memorisation map (issue 37): one public-domain work of the literal samples
cut into token windows and scored for p_z by the embedded SmolLM2-135M-Instruct, so that
the app opens with a p_z run to look at.

The windows are short (16-token prefix, 8-token continuation, every 4 tokens: 318
windows of the sample passages of *Alice's Adventures in Wonderland*, each token in two
continuations) because the demo scores them on a CPU: 100-token windows (50 + 50) cost
about 1 CPU second each there, and a few hundred of them would add minutes to the demo.
The cutting is recorded with every window, as `import extraction --stride` records it.

`copyaudit demo` opening the app does not wait for the map: it hands the app a
DemoMapRequest, which the app runs in the background like any run it starts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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

    from copyaudit.models.pz_scoring import PzScorer

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


def is_done(db_path: Path, request: PzRequest = REQUEST) -> bool:
    """Whether the map's run is complete (nothing left to score)."""
    with Store(db_path) as store:
        try:
            return str(run_row(store, request.run_name())["status"]) == "done"
        except UserError:  # not run yet
            return False


def build_pz_demo(
    db_path: Path,
    root: Path | None = None,
    on_progress: ProgressCallback | None = None,
    scorer: PzScorer | None = None,
    *,
    request: PzRequest = REQUEST,
    cancel: threading.Event | None = None,
) -> PzOutcome | None:
    """Import the windows (once) and score those the run lacks with `scorer` (default:
    `request`'s model, loaded only when some are left); None when the run was already
    done. Safe to repeat, and to resume after a cancel."""
    from copyaudit.models.tokenizer_loading import load_tokenizer  # deferred: transformers

    root = root or samples_dir()
    tokenizer = scorer.loaded.tokenizer if scorer is not None else load_tokenizer(request.model)
    announce(on_progress, SUITE, "load", f"demo: cutting {WORK} into p_z windows")
    with Store(db_path) as store:
        import_cases(store, SUITE, KIND, work_windows(root, tokenizer), source=f"samples: {WORK}")
    if is_done(db_path, request):
        return None
    return execute_pz(db_path, request, on_progress=on_progress, cancel=cancel, scorer=scorer)


@dataclass(frozen=True)
class DemoMapRequest:
    """The map as a run the app starts (copyaudit.runs.lifecycle.RunnableRequest): the
    windows imported, then scored; `pz`: the p_z run (the embedded model, or a stand-in)."""

    pz: PzRequest = REQUEST
    root: Path | None = None

    def run_name(self) -> str:
        return self.pz.run_name()

    def execute(
        self,
        db_path: Path,
        *,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> PzOutcome:
        outcome = build_pz_demo(db_path, self.root, on_progress, request=self.pz, cancel=cancel)
        return outcome or PzOutcome(run=self.run_name(), kind=KIND, status="done")


def pending_map(db_path: Path) -> DemoMapRequest | None:
    """The map's run for the app to start, or None when it is complete."""
    return None if is_done(db_path) else DemoMapRequest()
