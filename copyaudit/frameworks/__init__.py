"""Reading the logs of the evaluation frameworks people run: HELM, lm-evaluation-harness,
inspect_ai, garak and promptfoo. Each reader turns one log into a `FrameworkLog` (the
cases it carries, the outputs, the model and decoding as the framework recorded them,
and the framework's own per-instance figures where it keeps them); `copyaudit
import-generations --from NAME PATH` stores it (copyaudit.cli.frameworks)."""
