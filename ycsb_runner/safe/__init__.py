"""The guarantees every stage keeps: credentials masked wherever text is printed or written
(``secrets``), text from data escaped for the medium it reaches (``text``), files written atomically,
read within a bound and only inside their folder (``files``), one bench per target at a time
(``lock``), and no child process outliving the tool (``lifetime``)."""
