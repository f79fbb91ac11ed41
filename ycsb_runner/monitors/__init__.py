"""Metric samplers: the server (``serverStatus`` + optional psutil) and the YCSB client host (psutil).

``server_status.ServerSampler`` and ``client.ClientSampler`` do the I/O in a background thread and keep raw
samples; ``formulas`` (server) and the pure functions in ``client`` turn samples into per-run figures
and per-interval time series.
"""
