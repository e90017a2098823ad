"""calibrate/validate (calibrate/README.md)."""
