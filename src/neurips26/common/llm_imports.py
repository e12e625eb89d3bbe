"""Hugging Face transformers, imported where a job needs it (papers 08 and 14 run open-weight models in envs/llm.yaml;
the project's own environment has no transformers), with an error that names the package, its pin and the env."""

from __future__ import annotations

from types import ModuleType

__all__ = ["TRANSFORMERS_PIN", "import_transformers"]

TRANSFORMERS_PIN = "transformers==5.23.0"  # envs/llm.yaml


def import_transformers(user: str) -> ModuleType:
    """The transformers module; ModuleNotFoundError (name "transformers") saying that `user` needs it and where it is
    pinned when it is not installed."""
    try:
        import transformers
    except ImportError as error:
        raise ModuleNotFoundError(
            f"{user} needs the package 'transformers', which is not installed here; it is pinned in envs/llm.yaml "
            f"({TRANSFORMERS_PIN})",
            name="transformers",
        ) from error
    return transformers
