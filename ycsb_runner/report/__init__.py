"""Reports as documents (``ycsb_runner.present.document``): ``run_report`` and ``regress_report`` build the
run's and the nightly check's reports, ``plots`` their figures, ``html`` is the HTML renderer and ``pages``
writes a report as its HTML and Markdown pages; every ``--format`` shows it too (``output.FORMATS``)."""
