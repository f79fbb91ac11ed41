"""The plan stage, before anything runs: a suite file read, overridden and checked (``suite``),
expanded into the ordered steps with a duration estimate (``plan``; ``estimate``: the rates earlier
runs measured), checked against the target's known limits (``preflight``), and each step's YCSB
command line rendered from the templates (``commandline``)."""
