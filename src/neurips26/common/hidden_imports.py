"""Import a package with some of its optional dependencies hidden, for packages whose import eagerly imports every
optional dependency that is installed.

MONAI is one: ``import monai`` (which any ``monai.networks`` import runs first) loads all of its subpackages
(``monai/__init__.py``: ``load_submodules``), and their ``monai.utils.optional_import`` calls import each optional
package that is installed right away (scipy.signal for the ultrasound confidence map, matplotlib.pyplot for the
notebook helpers, scikit-image's morphology for some transforms, scikit-learn for a metric). A job that only builds
MONAI networks pays for all of them (about 1.5 s of MONAI's 3 s at import, in each such job).

:func:`import_hiding` imports a module while the named optional packages look absent (``sys.modules[name] = None``,
so that importing them raises ImportError and ``optional_import`` records them as missing), then makes them
importable again: later imports of them in the job work as usual; only the hiding package's own references to them
are the "missing" stubs, which raise if the job calls the features that need them. A package already imported is not
hidden (it costs nothing more).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["import_hiding"]


def import_hiding(module: str, hidden: Sequence[str]) -> ModuleType:
    """``importlib.import_module(module)`` with the modules `hidden` (not yet imported) looking absent meanwhile;
    they are importable again afterwards."""
    blocked = [name for name in hidden if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # the import system's "not importable" marker
    try:
        return importlib.import_module(module)
    finally:
        for name in blocked:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
