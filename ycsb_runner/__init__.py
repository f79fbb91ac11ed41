"""ycsb-runner: run YCSB 0.17.0 studies against MongoDB and make sense of the numbers."""

__version__ = "0.1.0"
