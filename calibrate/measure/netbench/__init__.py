"""calibrate/measure/netbench (calibrate/README.md)."""
