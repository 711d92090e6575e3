"""The framework readers by the name `import-generations --from NAME` takes."""

from __future__ import annotations

from copyaudit.frameworks.garak import read_garak
from copyaudit.frameworks.helm import read_helm
from copyaudit.frameworks.inspect_log import read_inspect
from copyaudit.frameworks.lm_eval import read_lm_eval
from copyaudit.frameworks.log import Reader
from copyaudit.frameworks.promptfoo import read_promptfoo

FRAMEWORKS: dict[str, Reader] = {
    "helm": read_helm,
    "lm-eval": read_lm_eval,
    "inspect": read_inspect,
    "garak": read_garak,
    "promptfoo": read_promptfoo,
}
