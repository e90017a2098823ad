#!/usr/bin/env python3
"""Every attribute analyzer/ reads by name (attr_int, attr_float, attr_string,
attr_ints, attr_floats, find_attr with a literal name) has its ONNX type in
check_signature.cpp's attribute_kind() table, which refuses a wrongly typed
attribute with one clear error before any shape function runs: an attribute
missing there would be read as a silent 0 (docs/errors.md "Checked before
use"). tests/test_hostile_ops.cpp holds the table to ONNX's schemas.

usage: tests/attribute_types.py [REPO]
"""
import os
import re
import sys


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    src = os.path.join(root, "analyzer", "src")
    table_file = os.path.join(src, "shape", "check_signature.cpp")
    table = set(re.findall(r'\{"([A-Za-z_]+)", A::', open(table_file).read()))
    if not table:
        print(f"{table_file}: no attribute_kind() table found")
        return 1
    read = re.compile(r'\b(?:attr_int|attr_float|attr_string|attr_ints|attr_floats|find_attr)\([^,()]+, "([A-Za-z_]+)"')
    missing = []
    for folder, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".cpp", ".h")):
                continue
            path = os.path.join(folder, f)
            for number, line in enumerate(open(path), 1):
                for name in read.findall(line):
                    if name not in table:
                        missing.append(f"{os.path.relpath(path, root)}:{number}: reads attribute '{name}', "
                                       f"which attribute_kind() does not type")
    for m in missing:
        print(m)
    print(f"{len(table)} typed attributes; {len(missing)} read without a type")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
