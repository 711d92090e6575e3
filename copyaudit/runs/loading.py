"""Loading a run's model, the prelude every study's run shares: report the load phase,
load through copyaudit.models.registry with the request's options
(run_request.ModelRequest.load_options), store a failure on a run that exists already,
and decide the prompt format from what was loaded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from copyaudit.runs.progress import ProgressCallback, announce
from db import Store
from db.runs import failure_recorded


@contextmanager
def loading(
    store: Store, name: str, model: str, on_progress: ProgressCallback | None
) -> Iterator[None]:
    """Report 'loading model MODEL' (the load phase), then store any failure inside the
    block as the error of run `name` if it exists already (a resumed run shows why it
    did not start)."""
    announce(on_progress, name, "load", f"loading model {model}")
    with failure_recorded(store, name):
        yield


def uses_chat(model: object, requested: bool | None) -> bool:
    """Chat formatting when asked; by default (None) when the model has a chat template
    (instruct models, as CopyBench prompted them) or is a chat endpoint."""
    if requested is not None:
        return requested
    if getattr(model, "mode", None) == "chat":
        return True
    tokenizer = getattr(getattr(model, "loaded", None), "tokenizer", None)
    return bool(getattr(tokenizer, "chat_template", None))
