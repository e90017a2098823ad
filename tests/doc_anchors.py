#!/usr/bin/env python3
"""Every reference to a doc section (docs/<name>.md, then the section in quotes) in the code and the docs names a
section that exists (issue 22: comments must point at true places).

usage: tests/doc_anchors.py REPO_ROOT

A reference matches a heading of that file whose text is the quoted words,
or starts with them followed by " (" or ":" (`## Two networks (report --vs)`
is "Two networks"). Prints each dangling reference as FILE:LINE and exits 1.
"""
import os
import re
import sys

REF = re.compile(r'(docs/[A-Za-z0-9_./-]+\.md)[`\'")\]]*,? *\\?"([^"\\\n]{2,80})\\?"')
SOURCES = (".cpp", ".h", ".py", ".sh", ".md", ".cmake", ".txt")
SKIP = {".git", "build", "node_modules"}


def headings(path):
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"#{1,6} +(.+?) *$", line)
        if m:
            text = m.group(1).replace("`", "")
            out.add(text)
            for sep in (" (", ":", ","):
                if sep in text:
                    out.add(text.split(sep)[0])
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    cache, bad, seen = {}, [], 0
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith("build")]
        for name in files:
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(top, name)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            for m in REF.finditer(text):
                doc, section = m.group(1), m.group(2).replace("`", "")
                target = os.path.join(root, doc)
                seen += 1
                if not os.path.isfile(target):
                    bad.append(f"{os.path.relpath(path, root)}:{text.count(chr(10), 0, m.start()) + 1}: {doc} does not exist")
                    continue
                if doc not in cache:
                    cache[doc] = headings(target)
                if section not in cache[doc]:
                    bad.append(f"{os.path.relpath(path, root)}:{text.count(chr(10), 0, m.start()) + 1}: "
                               f"{doc} has no section \"{section}\"")
    for b in bad:
        print(b)
    print(f"{seen} references to doc sections, {len(bad)} dangling")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
