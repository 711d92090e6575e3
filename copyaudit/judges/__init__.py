"""Automatic judges: each scores generations and points at its evidence.

Modules: `literal` (ROUGE-L), `characters` (alias match), `events` (windowed
entailment; CopyBench's spaCy windows in `windows`; backends in
`entailment_lexical` and `entailment_hf`, loaded by `loading`), `qa` (SQuAD
F1/EM), `refusal`, `fluency` (both LM judges on `lm_judge`), `notice`,
`refusal_reader` (offline refusal: cues in `refusal_cues`, combiner from
`refusal_training`). Which judges exist and how each is built: `registry`
(factories take a `context.BuildContext`);
what the user chose: `options.JudgeOptions`; `presets.build_judges` is the entry point
for the runner and the CLI. Import the submodules directly; this package imports
nothing itself.
"""
