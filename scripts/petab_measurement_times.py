"""The finite times of a PEtab problem's measurement tables (shared by the bench scripts)."""
import os
import sys


def measurement_times(folder):
    """The finite `time` values of the measurementData*.tsv tables in `folder`, ascending, once
    each (empty when they hold none, e.g. steady-state data only). Exits naming the file when a
    folder has no table or a time is not a number."""
    tables = [f for f in os.listdir(folder) if f.startswith("measurementData") and f.endswith(".tsv")]
    if not tables:
        sys.exit(f"{folder}: no measurementData*.tsv")
    times = set()
    for table in tables:
        with open(os.path.join(folder, table)) as f:
            column = f.readline().rstrip("\n").split("\t").index("time")
            for line in f:
                cells = line.rstrip("\n").split("\t")
                if len(cells) > column:
                    try:
                        t = float(cells[column])
                    except ValueError:
                        sys.exit(f"{os.path.join(folder, table)}: time {cells[column]!r} is not a number")
                    if t == t and abs(t) != float("inf"):
                        times.add(t)
    return sorted(times)
