"""How bench/compare times PyTorch, once for every script: `step` run 3 times to warm up, then 5 timed loops of
at least 0.3 s and 3 calls each; the median seconds per call."""
import time


def median_seconds(step):
    for _ in range(3):
        step()
    runs = []
    for _ in range(5):
        n, start = 0, time.perf_counter()
        while True:
            step()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed > 0.3 and n >= 3:
                break
        runs.append(elapsed / n)
    runs.sort()
    return runs[2]
