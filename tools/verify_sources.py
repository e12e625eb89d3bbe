"""Check the files placed under resources/ by hand against the registry (config/sources.yaml) and its lock.

    python tools/verify_sources.py            # every registered file present under resources/
    python tools/verify_sources.py --record   # and record unlocked ones in config/sources.lock.yaml

A pinned file is checked against its hash, a locked one against its lock entry; a file locked on first fetch but
not yet in the lock is reported unchecked, or recorded with `origin: local file` under --record. Exits 1 on any
mismatch, naming the file, the expected and the actual hash.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neurips26.common import sources  # noqa: E402
from neurips26.common.locking import LOCK, verify_file  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resources", type=Path, default=sources.ROOT / "resources")
    parser.add_argument("--registry", type=Path, default=sources.REGISTRY)
    parser.add_argument("--lock", type=Path, default=LOCK)
    parser.add_argument("--record", action="store_true", help="record unlocked files (origin: local file)")
    args = parser.parse_args(argv)
    pattern = re.compile(sources.path_pattern(args.registry))
    failed = 0
    for path in sorted(p for p in args.resources.rglob("*") if p.is_file()):
        name = path.relative_to(args.resources).as_posix()
        if not pattern.fullmatch(name):
            continue
        try:
            status = verify_file(sources.lookup(name, args.registry), path, args.lock, record=args.record)
        except ValueError as error:  # names the file, the expected and the actual hash
            failed += 1
            print(f"MISMATCH   {error}")
            continue
        print(f"{status:10s} resources/{name}")
    return int(failed > 0)


if __name__ == "__main__":
    sys.exit(main())
