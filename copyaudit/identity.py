"""Who is labelling: the annotator name, remembered between sessions.

The name lives in a small JSON file, `config.json`, in $COPYAUDIT_CONFIG_DIR when
that is set (tests set it) and in ~/.config/copyaudit/ otherwise. A name given on
the command line wins and becomes the remembered one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from copyaudit.errors import UserError

CONFIG_DIR_ENV = "COPYAUDIT_CONFIG_DIR"
CONFIG_FILE = "config.json"
ANNOTATOR_KEY = "annotator"


def config_path() -> Path:
    directory = os.environ.get(CONFIG_DIR_ENV)
    base = Path(directory) if directory else Path.home() / ".config" / "copyaudit"
    return base / CONFIG_FILE


def load_config() -> dict[str, Any]:
    """The settings file as a dict ({} when there is none).

    A file that is not a JSON object is an error naming the file, rather than
    being silently replaced (it may hold settings another version wrote).
    """
    path = config_path()
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UserError(
            f"settings file {path} is not valid JSON ({error}); fix or remove it"
        ) from None
    if not isinstance(value, dict):
        raise UserError(f"settings file {path} must hold a JSON object")
    return value


def save_config(config: dict[str, Any]) -> None:
    """Write the settings atomically (a reader never sees half a file)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(config, handle, ensure_ascii=False, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remembered_annotator() -> str | None:
    name = load_config().get(ANNOTATOR_KEY)
    return name.strip() if isinstance(name, str) and name.strip() else None


def remember_annotator(name: str) -> None:
    if not name.strip():
        raise UserError("an annotator name must not be empty")
    config = load_config()
    if config.get(ANNOTATOR_KEY) != name.strip():
        config[ANNOTATOR_KEY] = name.strip()
        save_config(config)


def resolve_annotator(cli_value: str | None) -> str | None:
    """The annotator to label as: `cli_value` when given (it is then remembered),
    else the remembered name, else None (the caller asks for one)."""
    if cli_value is not None and cli_value.strip():
        remember_annotator(cli_value)
        return cli_value.strip()
    return remembered_annotator()


def setting(key: str, default: Any) -> Any:
    """A remembered app setting (`default` when unset or unreadable)."""
    try:
        value = load_config().get(key, default)
    except UserError:
        return default
    return value if isinstance(value, type(default)) else default


def remember_setting(key: str, value: object) -> None:
    """Store an app setting beside the annotator name."""
    config = load_config()
    if config.get(key) != value:
        config[key] = value
        save_config(config)
