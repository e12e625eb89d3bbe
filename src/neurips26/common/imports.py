"""The library modules a script reaches, read from its import statements (no module is imported).

Rules depend on these files (workflow/Snakefile adds them as the input `library`), so that editing a
module of `src/neurips26` reruns exactly the jobs whose scripts reach it, and the env-coverage test
follows the same graph to the third-party packages a rule's env must provide.
"""

from __future__ import annotations

import ast
import sys
from functools import lru_cache
from pathlib import Path

PACKAGE = "neurips26"


def module_file(src: Path, name: str) -> Path | None:
    """The file of module `name` (dotted) under `src`, or None when it is not a module there."""
    base = Path(src, *name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def _imports(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(library module names, top-level third-party names) imported anywhere in `path`, lazily or not."""
    library, third_party = [], []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            top = name.split(".")[0]
            if top == PACKAGE:
                parts = name.split(".")
                library += [".".join(parts[:depth]) for depth in range(1, len(parts) + 1)]  # packages' __init__ run too
            elif top not in sys.stdlib_module_names and top != "__future__":
                third_party.append(top)
    return tuple(dict.fromkeys(library)), tuple(sorted(set(third_party)))


def reached(script: Path, src: Path) -> tuple[set[Path], set[str]]:
    """(library files, third-party top-level packages) reached from `script` through the library."""
    files: set[Path] = set()
    packages: set[str] = set()
    todo = [Path(script).resolve()]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        library, third_party = _imports(path)
        packages.update(third_party)
        for name in library:
            file = module_file(src, name)
            if file is not None:
                file = file.resolve()
                files.add(file)
                todo.append(file)
    return files, packages


def library_files(script: str | Path, src: str | Path) -> list[str]:
    """The library files `script` reaches, sorted, as paths relative to the parent of `src` (the repository)."""
    src = Path(src).resolve()
    files, _ = reached(Path(script), src)
    return sorted(str(f.relative_to(src.parent)) for f in files)
