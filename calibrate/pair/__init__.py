"""calibrate/pair (calibrate/README.md)."""
