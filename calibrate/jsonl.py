"""The one reader of JSON-lines files (one JSON object a line, gzip by the name's .gz)."""
import gzip
import json
import os


def parse(text, path, cut_tail=False):
    """The rows of `text`, read from `path`; blank lines skipped, a bad line is
    ValueError "PATH:N: not a JSON line". cut_tail: the piece after the last newline
    is left out, as a kill mid-write leaves it (files a run appends to)."""
    lines = text.split("\n")
    if cut_tail:
        lines = lines[:-1]
    rows = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise ValueError("%s:%d: not a JSON line" % (path, n)) from None
    return rows


def read(path, cut_tail=False, missing_ok=False):
    """The rows of one file (gzip when its name ends in .gz); a missing file is no rows
    when missing_ok, OSError otherwise. Anything but a regular file is OSError too: a
    FIFO would block the read, a device never end it."""
    path = os.fspath(path)
    if missing_ok and not os.path.exists(path):
        return []
    if os.path.exists(path) and not os.path.isfile(path):
        raise OSError("%s: not a regular file" % path)
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return parse(f.read(), path, cut_tail)


def in_folder(folder, name):
    """The path of NAME or NAME.gz in a folder, whichever it holds (NAME when neither): run
    folders are committed with their large files gzipped."""
    plain = os.path.join(os.fspath(folder), name)
    return plain + ".gz" if not os.path.lexists(plain) and os.path.lexists(plain + ".gz") else plain


def read_all(paths):
    """The rows of every file of a comma-separated list (or a list), in order."""
    rows = []
    for p in paths.split(",") if isinstance(paths, str) else paths:
        rows += read(p)
    return rows
