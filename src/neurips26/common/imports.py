"""The library modules a script reaches, read from its import statements (no module is imported).

Rules depend on these files (workflow/Snakefile adds them as the input `library`), so that editing a
module of `src/neurips26` reruns exactly the jobs whose scripts reach it, and the env-coverage test
follows the same graph to the third-party packages a rule's env must provide.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

PACKAGE = "neurips26"


def module_file(src: Path, name: str) -> Path | None:
    """The file of module `name` (dotted) under `src`, or None when it is not a module there."""
    base = Path(src, *name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package(path: Path, src: Path) -> list[str]:
    """The package a file under `src` belongs to, as name parts (empty for a file outside `src`)."""
    try:
        return list(Path(path).resolve().relative_to(src).parent.parts)
    except ValueError:
        return []


def _absolute(package: list[str], level: int, module: str | None) -> str | None:
    """The absolute name of `from <level dots><module> import ...` in `package`, or None above the top."""
    if level == 0:
        return module
    if level - 1 > len(package) or not package:
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join(base + (module.split(".") if module else []))


@cache
def _imports(path: Path, src: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(library module names, top-level third-party names) imported anywhere in `path`, lazily or not,
    relative imports resolved against the file's package."""
    library, third_party = [], []
    package = _package(path, src)
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(package, node.level, node.module)
            if module:
                names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for name in names:
            top = name.split(".")[0]
            if top == PACKAGE:
                parts = name.split(".")
                library += [".".join(parts[:depth]) for depth in range(1, len(parts) + 1)]  # packages' __init__ run too
            elif top not in sys.stdlib_module_names and top != "__future__":
                third_party.append(top)
    return tuple(dict.fromkeys(library)), tuple(sorted(set(third_party)))


@cache
def _direct(path: Path, src: Path) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """(library files, third-party packages) that `path` imports directly."""
    library, third_party = _imports(path, src)
    files = (module_file(src, name) for name in library)
    return tuple(f.resolve() for f in files if f is not None), third_party


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
        direct, third_party = _direct(path, src)
        packages.update(third_party)
        files.update(direct)
        todo.extend(direct)
    return files, packages


# what workflow parsing uses: a scan of import statements by pattern, ten times faster than parsing each
# file (every dry run pays for it); tests check that it finds what the syntax tree finds
_FROM = re.compile(rf"^[ \t]*from[ \t]+({PACKAGE}[\w.]*|\.+[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.M)


@cache
def _scanned(path: Path, src: Path) -> tuple[Path, ...]:
    text = path.read_text()
    names: list[str] = []
    package = _package(path, src)
    for module, imported in _FROM.findall(text):
        dots = len(module) - len(module.lstrip("."))
        module = _absolute(package, dots, module[dots:] or None)
        if not module:
            continue
        names.append(module)
        names += [f"{module}.{n.split()[0]}" for n in re.sub(r"#.*", "", imported).strip("()").split(",") if n.strip()]
    for imported in _IMPORT.findall(text):
        names += [n.split()[0] for n in re.sub(r"#.*", "", imported).split(",") if n.strip().startswith(PACKAGE)]
    full = []
    for name in names:
        parts = name.split(".")
        full += [".".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
    files = (module_file(src, name) for name in dict.fromkeys(full))
    return tuple(f.resolve() for f in files if f is not None)


def library_files(script: str | Path, src: str | Path) -> list[str]:
    """The library files `script` reaches, sorted, as paths relative to the parent of `src` (the repository)."""
    src = Path(src).resolve()
    files: set[Path] = set()
    todo = [Path(script).resolve()]
    while todo:
        path = todo.pop()
        for file in _scanned(path, src):
            if file not in files:
                files.add(file)
                todo.append(file)
    return sorted(str(f.relative_to(src.parent)) for f in files)
