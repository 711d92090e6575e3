"""Run work in batches, halving the batch size when the accelerator runs out of memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class BatchTooLargeError(RuntimeError):
    """Out of memory even with a batch of one item."""


def is_out_of_memory(error: BaseException) -> bool:
    """True for torch.cuda.OutOfMemoryError and any RuntimeError that says "out of memory"
    (older torch, MPS and some CUDA kernels raise a plain RuntimeError)."""
    try:
        import torch  # deferred: loads torch

        if isinstance(error, torch.cuda.OutOfMemoryError):
            return True
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def free_accelerator_memory() -> None:
    try:
        import torch  # deferred: loads torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass


class AdaptiveBatcher:
    """Calls `run_batch` on consecutive slices of the items. On out-of-memory the slice
    is retried at half the size, and the smaller size is kept for later calls (memory
    does not come back by itself). Results come back in item order."""

    def __init__(self, batch_size: int) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.halvings = 0

    def run(
        self,
        items: Sequence[Item],
        run_batch: Callable[[Sequence[Item]], list[Result]],
    ) -> list[Result]:
        results: list[Result] = []
        start = 0
        while start < len(items):
            chunk = items[start : start + self.batch_size]
            try:
                chunk_results = run_batch(chunk)
            except Exception as error:
                if not is_out_of_memory(error):
                    raise
                free_accelerator_memory()
                if self.batch_size == 1:
                    raise BatchTooLargeError(
                        "out of memory with a batch of one; use a smaller model, a "
                        "shorter prompt or fewer new tokens"
                    ) from error
                self.batch_size = max(1, self.batch_size // 2)
                self.halvings += 1
                continue
            if len(chunk_results) != len(chunk):
                raise RuntimeError(
                    f"batch returned {len(chunk_results)} results for {len(chunk)} items"
                )
            results.extend(chunk_results)
            start += len(chunk)
        return results
