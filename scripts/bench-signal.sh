#!/usr/bin/env bash
# scripts/bench-signal.sh - how fast pdd acts on a signal while its device
# answers nothing.
#
# The input is a file on tests/faultfs whose every read sleeps DELAY_S
# seconds (10 by default), so that for that long no request comes back.
# For each engine in $ENGINES and each binary (PDD, and PDD_BASE when
# given, interleaved), RUNS rounds of:
#   usr1   SIGUSR1 WAIT_S seconds into the copy: seconds until its report
#          ("0+0 records in") is on standard error
#   int    then SIGINT: seconds until pdd says it is stopping (a line
#          starting "pdd: stopping:"; a pdd that does not say so shows
#          "-"), and seconds until it has exited (the reads in flight
#          must come back first: about DELAY_S - WAIT_S)
#   int2   SIGINT, then a second SIGINT 0.5 s later: seconds from the
#          second until pdd has exited
# Medians of the rounds are printed as a table.  Times are taken by the
# script from the moment kill(2) returns to the moment the line is read
# from a pipe, or waitpid(2) returns.
#
# Run as root from the repository root after `make` (needs /dev/fuse and
# tests/faultfs/faultfs): scripts/bench-signal.sh
#   ENGINES="uring aio threads" RUNS=3 DELAY_S=10 WAIT_S=2 PDD=./pdd PDD_BASE=
set -euo pipefail

ENGINES=${ENGINES:-uring aio threads}
RUNS=${RUNS:-3}
export DELAY_S=${DELAY_S:-10}
WAIT_S=${WAIT_S:-2}
PDD=${PDD:-./pdd}
PDD_BASE=${PDD_BASE:-}
FAULTFS=${FAULTFS:-tests/faultfs/faultfs}

[[ $(id -u) == 0 ]] || { echo "bench-signal.sh: must run as root (FUSE)" >&2; exit 1; }
[[ -x $FAULTFS ]] || { echo "bench-signal.sh: no $FAULTFS (make)" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/pdd-bench-signal.XXXXXX)
cleanup() {
	for _ in $(seq 150); do umount "$dir/mnt" 2>/dev/null && break; sleep 0.1; done
	rm -rf "$dir"
}
trap cleanup EXIT
mkdir "$dir/mnt"
head -c $((1024 * 1024)) /dev/urandom >"$dir/back"
"$FAULTFS" "$dir/back" "$dir/mnt" delay_us=$((DELAY_S * 1000000))

python3 - "$dir" "$RUNS" "$WAIT_S" "$ENGINES" "$PDD" "$PDD_BASE" <<'EOF'
import os, signal, statistics, subprocess, sys, time, select

d, runs, wait, engines, pdd, base = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), sys.argv[5], sys.argv[6]
bins = [("pdd", os.path.abspath(pdd))] + ([("base", os.path.abspath(base))] if base else [])

def start(binary, engine):
    out = os.path.join(d, "out")
    if os.path.exists(out):
        os.unlink(out)
    return subprocess.Popen([binary, "if=" + os.path.join(d, "mnt/disk"), "of=" + out,
                             "bs=65536", "bpt=1", "qd=4", "threads=4", "engine=" + engine],
                            stderr=subprocess.PIPE)

def until_line(p, prefix, t0, limit=30):
    buf = p.pending if hasattr(p, "pending") else b""
    while time.monotonic() - t0 < limit:
        r, _, _ = select.select([p.stderr], [], [], 0.01)
        if r:
            chunk = os.read(p.stderr.fileno(), 4096)
            if not chunk:
                return None
            buf += chunk
            lines = buf.split(b"\n")
            for i, line in enumerate(lines[:-1]):
                if line.startswith(prefix):
                    p.pending = b"\n".join(lines[i + 1:])
                    return time.monotonic() - t0
    return None

def until_exit(p, t0):
    p.wait()
    return time.monotonic() - t0

res = {}
for rnd in range(runs):
    for engine in engines:
        for name, binary in bins:
            key = (name, engine)
            r = res.setdefault(key, {"usr1": [], "stop": [], "exit": [], "int2": []})
            p = start(binary, engine); time.sleep(wait)
            t0 = time.monotonic(); p.send_signal(signal.SIGUSR1)
            r["usr1"].append(until_line(p, b"0+0 records in", t0))
            time.sleep(0.2)
            t0 = time.monotonic(); p.send_signal(signal.SIGINT)
            r["stop"].append(until_line(p, b"pdd: stopping:", t0, limit=15))
            r["exit"].append(until_exit(p, t0))
            p = start(binary, engine); time.sleep(wait)
            p.send_signal(signal.SIGINT); time.sleep(0.5)
            t0 = time.monotonic(); p.send_signal(signal.SIGINT)
            r["int2"].append(until_exit(p, t0))
            time.sleep(0.2)

def med(v):
    v = [x for x in v if x is not None]
    return "%.3f" % statistics.median(v) if v else "-"

print("signals while the device answers nothing for %s s; seconds, medians of %d rounds" % (os.environ.get("DELAY_S", "10"), runs))
print("%-6s %-8s %10s %10s %10s %10s" % ("pdd", "engine", "USR1>rep", "INT>said", "INT>exit", "INT2>exit"))
for (name, engine), r in res.items():
    print("%-6s %-8s %10s %10s %10s %10s" % (name, engine, med(r["usr1"]), med(r["stop"]), med(r["exit"]), med(r["int2"])))
EOF
