"""tilewave's calibration (measure -> pair -> fit -> validate -> carry) as one package.

Run its scripts from the checkout's root as modules, e.g.
`python3 -m calibrate.validate.doc_figures --tilewave build/analyzer/tilewave`; the
GPU machine's calibrate/measure/run.py and timm_harness_bench.py also run as paths
(calibrate/measure/_path_entry.py). What the stages share lives here: stats
(Kendall's tau), jsonl (the JSON-lines reader), gpu_state (nvidia-smi), log,
harness_flags (tilewave's flags for the timed harnesses) and module (the in-process
tilewave module)."""
