"""calibrate/measure (calibrate/README.md)."""
