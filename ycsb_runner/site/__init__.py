"""``ycsb-runner site``: the run history as a static site (``build.build_site``)."""
