#!/usr/bin/env python3
"""ctest include_order (docs/model.md "Pipeline"): no file of analyzer/
includes another folder's private header (a quoted `../stage/x.h`); public
headers are included as `tilewave/...`.

The order of the stages is the build's, not this script's: each stage is a
library of analyzer/CMakeLists.txt that sees only its own and earlier
stages' public headers, so an upward include does not compile (ctest
layering_upward_include and layering_sideways_include show it).

usage: tests/include_order.py REPO_ROOT    (exit 1 naming each violation)
"""
import os
import re
import sys

EXTERNAL = {"tilewave_onnx.pb.h"}  # the protobuf classes generated at build time
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "analyzer")
    bad = []
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith((".h", ".cpp")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            for target in INCLUDE.findall(open(path, encoding="utf-8").read()):
                if target in EXTERNAL or target.startswith("tilewave/") or "/" not in target:
                    continue  # a public header, or its own folder's private one
                bad.append(f"analyzer/{rel}: includes {target}, another folder's private header")
    for line in bad:
        print(line)
    print(f"include_order: {len(bad)} violation(s)" if bad else "include_order: no file includes another folder's private header")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
