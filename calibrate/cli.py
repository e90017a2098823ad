"""What every calibrate command shares at its edge: the one error a bad input raises, and the
one way a command prints its lines or reports that error (one line naming the script, exit 1)."""
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
