"""Figures of README.md that calibrate/validate/doc_figures.py reprints and checks
(the blocks `<!-- doc_figures.py NAME -->` there)."""
from figures_common import DATA, FENCE, Runs, bias, fitted_layers, pct  # noqa: F401

FIGURES = {}
