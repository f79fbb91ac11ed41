"""Execution: launch YCSB phases, watch them, and drive a whole plan (with audit control and monitors)."""
