"""The framework readers by the name `import-generations --from NAME` takes."""

from __future__ import annotations

from copyaudit.frameworks.helm import read_helm
from copyaudit.frameworks.lm_eval import read_lm_eval
from copyaudit.frameworks.log import Reader

FRAMEWORKS: dict[str, Reader] = {
    "helm": read_helm,
    "lm-eval": read_lm_eval,
}
