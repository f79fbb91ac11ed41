"""Reports as documents: ``document`` holds what a report says (title, sections, banners, tables, figures,
notes), ``html`` and ``markdown`` write it as a page; the command tables' formats (``output.FORMATS``) show
its tables (``Document.views``)."""
