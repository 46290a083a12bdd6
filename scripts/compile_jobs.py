"""The detached cc -O2 jobs a run leaves in a compiled-model cache (docs/native-cache.md)."""
import os
import time


def settle(cache, timeout=600):
    """Waits until no detached cc -O2 job holds a lock in the cache folder."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if not any(f.endswith(".compiling") for f in os.listdir(cache)):
            return
        time.sleep(0.1)
