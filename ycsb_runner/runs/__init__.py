"""The runs, kept: one run folder, typed (``model``: the one place that writes and reads
``results/<run-id>/``; ``columns``: what each of its files and columns holds; ``metrics``: the
figures computed per step), and the history of all runs (``history``: SQLite or MongoDB; ``series``
names one of its series, ``alerts`` the alerts it keeps with their triage). Every bench writes both;
the estimate, the analysis, the reports and the nightly check read them."""
