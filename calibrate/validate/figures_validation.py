"""The figures docs/validation.md quotes (calibrate/validate/doc_figures.py)."""
from calibrate.validate import kernel_classes  # (calibrate/validate/kernel_classes.py)
from calibrate.validate.figures_common import DATA

# The run.py folders with profiled forwards under timm's harness on the H200.
RUN_FOLDERS = [DATA + "/measure_run", DATA + "/two_commands/run", DATA + "/corpus/run"]


def validation_kernel_classes(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h200/measure_run calibrate/data/h200/two_commands/run calibrate/data/h200/corpus/run`."""
    if "kernel_classes" not in runs.cache:
        runs.cache["kernel_classes"] = kernel_classes.classes(runs.tw, RUN_FOLDERS)
    results, failed = runs.cache["kernel_classes"]
    return kernel_classes.lines_of(results, failed, "harness") + kernel_classes.left_out_lines(failed)


FIGURES = {"validation-kernel-classes": validation_kernel_classes}
