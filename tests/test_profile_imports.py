"""tools/profile_imports.py: which imports a script runs at start, and what they cost."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from profile_imports import module_level_imports, parse_importtime, profile, rule_scripts  # noqa: E402

IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       500 |        500 |     numpy.core
import time:      1000 |       1500 |   numpy
import time:      2000 |       3500 | heavy
import time:       100 |        100 |     json
import time:       300 |        400 |   neurips26.common.io
import time:       200 |        600 | neurips26.common
import time:      4000 |       4000 |   sklearn.cluster
import time:        50 |       4050 | neurips26.paper.method
"""


def test_a_scripts_imports_are_those_run_at_start(tmp_path):
    code = (
        "from __future__ import annotations\nimport os\nif True:\n    import json\ntry:\n    import csv\n"
        "except ImportError:\n    pass\n\ndef f():\n    import ot\n"
    )
    path = tmp_path / "script.py"
    path.write_text(code)
    assert module_level_imports(path).splitlines() == ["import os", "import json", "import csv"]


def test_packages_are_charged_to_what_our_code_imports():
    seconds, packages = parse_importtime(IMPORTTIME)
    assert seconds == (500 + 1000 + 2000 + 100 + 300 + 200 + 4000 + 50) / 1e6
    # heavy is imported by the script (its time covers numpy, which it pulled in); sklearn by a neurips26 module;
    # numpy only by heavy, json is the standard library
    assert packages == {"sklearn": 0.004, "heavy": 0.0035}


def test_a_slow_module_shows_in_the_profile(tmp_path):
    (tmp_path / "slowpkg").mkdir()
    (tmp_path / "slowpkg" / "__init__.py").write_text("import time\ntime.sleep(0.3)\n")
    script = tmp_path / "script.py"
    script.write_text("import slowpkg\n\n\ndef main():\n    import nothing_at_start\n")
    result = profile(script, src=tmp_path)
    assert result.seconds >= 0.3
    assert list(result.packages) == ["slowpkg"] and result.packages["slowpkg"] >= 0.3


def test_every_rule_with_a_script_is_mapped_to_an_existing_script():
    scripts = rule_scripts()
    assert "bird_train" in scripts and scripts["bird_train"] == "scripts/bird/train.py"
    for rule, script in scripts.items():
        assert (ROOT / script).is_file(), rule
