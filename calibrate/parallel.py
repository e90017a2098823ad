"""The one way calibrate/ spreads predictions over the CPUs: threads, since the tilewave module releases the GIL
while it analyses and the command runs as its own process."""
import concurrent.futures
import os


def pmap(fn, items):
    """[fn(item) for item in items], on a thread per CPU, in the items' order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(fn, items))
