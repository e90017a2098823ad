"""calibrate/cli.py: how every calibrate command prints its lines or reports a bad input."""
import os
import subprocess
import sys

from calibrate.cli import InputError, print_lines

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_lines_are_printed_one_per_line(capsys):
    assert print_lines("x.py", lambda: ["a", "b"]) == 0
    assert capsys.readouterr().out == "a\nb\n"


def test_a_bad_input_is_one_line_naming_the_script_and_exit_1(capsys):
    def bad():
        raise InputError("data/run: no kernels.jsonl")
    assert print_lines("x.py", bad) == 1
    got = capsys.readouterr()
    assert got.out == ""
    assert got.err == "x.py: data/run: no kernels.jsonl\n"


def test_a_missing_module_is_reported_the_same_way(capsys):
    def no_module():
        raise ImportError("the tilewave Python module is neither on PYTHONPATH nor in build")
    assert print_lines("x.py", no_module) == 1
    assert capsys.readouterr().err.startswith("x.py: the tilewave Python module")


def test_a_reader_that_closes_the_pipe_gets_no_traceback():
    # `script | true`: the reader has gone before the script prints (it computes for 0.5 s first).
    code = ("import sys, time; from calibrate.cli import print_lines; "
            "sys.exit(print_lines('x.py', lambda: time.sleep(0.5) or ['x' * 999] * 100))")
    writer = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=dict(os.environ, PYTHONPATH=ROOT))
    reader = subprocess.Popen(["true"], stdin=writer.stdout)
    writer.stdout.close()  # the reader held the only read end
    assert reader.wait() == 0
    err = writer.stderr.read().decode()
    assert writer.wait() == 1
    assert err == ""


def test_kernel_classes_named_without_op_of_or_text_is_a_usage_error():
    # `--named` sums measured kernels by name beside one op's pairs: meaningless alone or with no text.
    for args in (["--named", "upsample"], ["--op-of", "timm/hrnet_w32:Resize", "--named", ""]):
        done = subprocess.run([sys.executable, "-m", "calibrate.validate.kernel_classes", "some/run"] + args, cwd=ROOT,
                              capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
        assert done.returncode == 2 and done.stdout == ""
        assert "--named needs --op-of and a non-empty TEXT" in done.stderr
