"""Reports as documents: ``document`` holds what a report says (title, sections, banners, tables, figures,
notes), ``html`` and ``markdown`` write it as a page and ``pages`` writes both; the command tables' formats
(``output.FORMATS``) show it (``document.Document.views`` and ``data``; Markdown: its page). ``run_report``
and ``regress_report`` build the run's and the nightly check's reports, ``plots`` their figures."""
