"""calibrate/fit (calibrate/README.md)."""
