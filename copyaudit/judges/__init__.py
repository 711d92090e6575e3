"""Automatic judges: each scores generations and points at its evidence.

Modules: `literal` (ROUGE-L), `characters` (alias match), `events` (windowed
entailment; CopyBench's spaCy windows in `windows`; backends in
`entailment_lexical` and `entailment_hf`, loaded by `loading`), `qa` (SQuAD
F1/EM), `refusal`, `fluency`, and `presets` (`build_judges`, the entry point for
the runner and the CLI). Import the submodules directly; this package imports
nothing itself.
"""
