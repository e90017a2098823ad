"""What every calibrate command shares at its edge: the one error a bad input raises, the one way a
command prints its lines or reports that error (one line naming the script, exit 1), and the one
--tilewave option of the commands that use the Python module."""
import os
import sys


class InputError(Exception):
    """A file or folder that cannot be read, or is not what it should be: one line names it."""


def print_lines(script, make_lines):
    """Print the lines make_lines() returns and return 0. An InputError, or an ImportError (no
    tilewave module), is one line on stderr, '<script>: <why>', and 1; so is a reader that
    closed the pipe, without a traceback."""
    try:
        lines = make_lines()
    except (InputError, ImportError) as e:
        print("%s: %s" % (script, e), file=sys.stderr)
        return 1
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def add_tilewave_option(ap, default=None):
    """--tilewave: the CLI beside whose build the Python module is found (calibrate/module.py)."""
    ap.add_argument("--tilewave", default=default,
                    help="the CLI whose build holds the Python module (where `import tilewave` finds none)")
