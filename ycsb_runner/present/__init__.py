"""Presentation: what a command shows is a document (``document``) that one renderer per format
writes (``output``: terminal, CSV, JSON, Markdown), in tables that fit any terminal (``termtable``),
with the progress of a running suite on the console (``console``)."""
