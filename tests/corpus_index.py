"""An infini-gram index built as a corpus is indexed elsewhere: the package's own indexer
(its `tokenize` step, then `build_sa`), offline, with a local tokenizer standing in for
the hub tokenizer the indexer would load by name."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np


def build_corpus_index(
    documents: Sequence[tuple[str, dict[str, Any]]], folder: Path, tokenizer: Any, shards: int = 1
) -> Path:
    """Index `documents` (text, metadata) with u16 tokens under `folder`/index; the
    metadata is stored as the indexer stores it (with each document's file and line)."""
    from infini_gram import indexing

    data, index = folder / "data", folder / "index"
    data.mkdir(parents=True)
    with open(data / "corpus.jsonl", "w", encoding="utf-8") as out:
        for text, metadata in documents:
            out.write(json.dumps({"text": text, **metadata}) + "\n")
    args = argparse.Namespace(
        data_dir=str(data), save_dir=str(index), temp_dir=str(index), version=4,
        tokenizer="gpt2", token_dtype="u16", add_metadata=True, add_unigram=False,
        shards=shards, workers=1, worker_id=0, batch_size=65536, cpus=1, mem=1,
        token_width=2, doc_sep=b"\xff\xff",
    )  # fmt: skip
    index.mkdir()
    indexing.token_dtype, indexing.version = np.uint16, 4  # what its main() sets
    here, said = os.getcwd(), io.StringIO()
    loads = mock.patch("transformers.AutoTokenizer.from_pretrained", return_value=tokenizer)
    try:  # the indexer changes directory to run its program, and prints its progress
        with loads, contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            indexing.tokenize(args)
            indexing.build_sa(args)
    finally:
        os.chdir(here)
    return index
