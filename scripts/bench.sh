#!/usr/bin/env bash
# bench.sh runs cadre's benchmarks and writes every output under $OUT
# (default ${TMPDIR:-/tmp}/cadre-bench), never inside the repository.
# BENCHMARKS.md says what each figure means and which goal it is held to.
#
#   scripts/bench.sh            # everything
#   scripts/bench.sh go         # only the Go benchmarks
#   scripts/bench.sh startup    # only the process-start figures
#   scripts/bench.sh peer       # only the peerbench runs
#   scripts/bench.sh attr       # peerbench with --no-transcript and a stub git
#   scripts/bench.sh fork       # peerbench fan-out 16: fresh children, forks, Claude Code
#   scripts/bench.sh hooks      # peerbench with hooks (scripts/peerbench/*.json): the fan-out 8
#                               # hook log check and fan-out 16 with and without a no-op hook
#
# Environment: OUT, COUNT (repetitions of each Go benchmark, default 5),
# RUNS (peerbench runs per fan-out, default 5), FANOUTS (peerbench fan-outs,
# default 1,4,16,64,256; beyond 20 the spawn gate queues), PEERBENCH_DIR (default
# /work/shared/peerbench), GREP=1 to include the 50,000-file Grep benchmark
# (slow: it generates the tree first).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-${TMPDIR:-/tmp}/cadre-bench}
COUNT=${COUNT:-5}
RUNS=${RUNS:-5}
FANOUTS=${FANOUTS:-1,4,16,64,256}
PEERBENCH_DIR=${PEERBENCH_DIR:-/work/shared/peerbench}
what=${1:-all}
mkdir -p "$OUT"

log() { printf '== %s (%s; load %s)\n' "$*" "$(date -u +%H:%M:%S)" "$(cut -d' ' -f1-3 /proc/loadavg)"; }

build() {
	log "build cadre -> $OUT/cadre"
	CGO_ENABLED=0 go build -o "$OUT/cadre.build" ./cmd/cadre
	# a copy: a fresh build output's page cache pages are dirty and measure 6-7 MiB more RSS
	cp "$OUT/cadre.build" "$OUT/cadre" && rm "$OUT/cadre.build"
	ls -l "$OUT/cadre" | awk '{print "binary size", $5, "bytes"}'
}

gobench() {
	log "BenchmarkSpawn, BenchmarkRunHTTP (root package)"
	go test -run '^$' -bench 'Spawn|RunHTTP' -benchmem -count "$COUNT" . | tee "$OUT/root.txt"
	log "BenchmarkTurn (internal/loop)"
	go test -run '^$' -bench Turn -benchmem -count "$COUNT" ./internal/loop/ | tee "$OUT/loop.txt"
	if [[ ${GREP:-0} == 1 ]]; then
		log "BenchmarkGrep (tool/builtin)"
		go test -run xxx -bench Grep -benchtime 3x -benchmem ./tool/builtin/ | tee "$OUT/grep.txt"
	fi
}

startup() {
	[[ -x $OUT/cadre ]] || build
	log "startup: exec --version, exec -p hi (first request), in-process Main"
	CADRE_BIN=$OUT/cadre go test -run '^$' -bench 'ExecVersion|ExecFirstRequest|MainFirstRequest' \
		-benchtime 50x -benchmem -count "$COUNT" ./internal/cli/ | tee "$OUT/startup.txt"
	if command -v hyperfine >/dev/null; then
		hyperfine -N --warmup 5 --runs 100 --export-json "$OUT/version.json" "$OUT/cadre --version" | tee "$OUT/version.txt"
	fi
	if command -v perf >/dev/null; then
		perf stat -r 50 "$OUT/cadre" --version 2>&1 >/dev/null | tee "$OUT/version-perf.txt" || true
	fi
}

peer() {
	[[ -x $OUT/cadre ]] || build
	log "peerbench (fan-out $FANOUTS; $RUNS runs each)"
	(cd "$PEERBENCH_DIR" && go build -o "$OUT/peerbench" ./cmd/peerbench)
	rm -rf "$OUT/pb"
	(cd "$PEERBENCH_DIR" && CADRE_BIN=$OUT/cadre "$OUT/peerbench" bench -peers cadre -n "$FANOUTS" -runs "$RUNS" \
		-out "$OUT/pb" -md "$OUT/pb/tables.md" >"$OUT/pb.log" 2>&1) || { cat "$OUT/pb.log"; exit 1; }
	cat "$OUT/pb/tables.md"
}

# attr runs peerbench with three variants of the cadre adapter, written
# under $OUT/adapters: --no-transcript, a stub git that exits 128 (so the
# session's git snapshot is empty and instant), and both.
attr() {
	[[ -x $OUT/cadre ]] || build
	[[ -x $OUT/peerbench ]] || (cd "$PEERBENCH_DIR" && go build -o "$OUT/peerbench" ./cmd/peerbench)
	local ad=$OUT/adapters
	mkdir -p "$ad" "$OUT/stubgit"
	printf '#!/bin/sh\nexit 128\n' >"$OUT/stubgit/git"
	chmod +x "$OUT/stubgit/git"
	cp "$PEERBENCH_DIR/adapters/cadre.json" "$ad/cadre.json"
	python3 - "$ad" "$OUT/stubgit" <<'PY'
import json, sys
ad, stub = sys.argv[1], sys.argv[2]
base = json.load(open(ad + "/cadre.json"))
for name, notr, nogit in (("cadre-notr", True, False), ("cadre-nogit", False, True), ("cadre-lean", True, True)):
    a = json.loads(json.dumps(base))
    a["name"] = name
    if notr:
        a["run"] = a["run"] + ["--no-transcript"]
    if nogit:
        a["path"] = [stub]
    json.dump(a, open(ad + "/" + name + ".json", "w"), indent=1)
PY
	log "peerbench attribution (cadre, cadre-notr, cadre-nogit, cadre-lean; $RUNS runs each)"
	rm -rf "$OUT/pb-attr"
	(cd "$PEERBENCH_DIR" && CADRE_BIN=$OUT/cadre "$OUT/peerbench" bench -adapters "$ad" \
		-peers cadre,cadre-notr,cadre-nogit,cadre-lean -n 1,16 -runs "$RUNS" \
		-out "$OUT/pb-attr" -md "$OUT/pb-attr/tables.md" >"$OUT/pb-attr.log" 2>&1) || { cat "$OUT/pb-attr.log"; exit 1; }
	cat "$OUT/pb-attr/tables.md"
}

# fork runs peerbench at fan-out 16 with fresh general-purpose children
# (cadre), with forks (cadre-fork, scripts/peerbench/cadre-fork.json:
# CADRE_FORK_SUBAGENT=1 and no subagent_type in the Agent calls) and,
# when it is installed under $PEERS_DIR/claude, Claude Code; then sums, from requests.jsonl, the
# children's input tokens billed at full price (canonical prompt bytes not
# read from the cache, / 4).
fork() {
	[[ -x $OUT/cadre ]] || build
	[[ -x $OUT/peerbench ]] || (cd "$PEERBENCH_DIR" && go build -o "$OUT/peerbench" ./cmd/peerbench)
	local ad=$OUT/adapters-fork peers=cadre,cadre-fork
	mkdir -p "$ad"
	cp "$PEERBENCH_DIR/adapters/cadre.json" "$ad/cadre.json"
	cp scripts/peerbench/cadre-fork.json "$ad/cadre-fork.json"
	if [[ -x ${PEERS_DIR:-${TMPDIR:-/tmp}/peers}/claude/node_modules/.bin/claude ]]; then
		cp "$PEERBENCH_DIR/adapters/claude-code.json" "$ad/"
		peers=$peers,claude-code
	fi
	log "peerbench fork comparison ($peers; fan-out 16; $RUNS runs each)"
	rm -rf "$OUT/pb-fork"
	(cd "$PEERBENCH_DIR" && CADRE_BIN=$OUT/cadre "$OUT/peerbench" bench -adapters "$ad" -peers "$peers" -n 16 -runs "$RUNS" \
		-startup-runs 1 -out "$OUT/pb-fork" -md "$OUT/pb-fork/tables.md" >"$OUT/pb-fork.log" 2>&1) || { cat "$OUT/pb-fork.log"; exit 1; }
	cat "$OUT/pb-fork/tables.md"
	python3 - "$OUT/pb-fork" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
for peer in sorted(os.listdir(out)):
    runs = sorted(glob.glob(os.path.join(out, peer, "n16-run*", "requests.jsonl")))
    full, firsts = [], []
    for path in runs:
        reqs = [json.loads(l) for l in open(path) if l.strip()]
        kids = [r for r in reqs if r.get("role") == "child"]
        full.append(sum(r.get("cache_total_bytes", 0) - r.get("cache_read_bytes", 0) for r in kids) // 4)
        seen = set()
        for r in sorted(kids, key=lambda r: r["seq"]):
            if r["child"] not in seen and r.get("cache_total_bytes"):
                seen.add(r["child"])
                firsts.append(r.get("cache_read_bytes", 0) / r["cache_total_bytes"])
    if full:
        print(f"{peer}: children's full-price input tokens per run (median of {len(full)}): {statistics.median(full)}; "
              f"median cached fraction of a child's first request: {statistics.median(firsts):.3f}")
PY
}

# hooks runs peerbench with the adapters in scripts/peerbench (issue 15):
# fan-out 8 with logging hooks on SubagentStart, SubagentStop and
# PreToolUse(Read) — every child's start, stop and Read must be logged
# exactly once with its agent id, the ids being the session's sub-agents —
# then fan-out 16 with no hook (cadre) and with one no-op hook on every
# tool call (cadre-noop-hook), interleaved.
hooks() {
	[[ -x $OUT/cadre ]] || build
	[[ -x $OUT/peerbench ]] || (cd "$PEERBENCH_DIR" && go build -o "$OUT/peerbench" ./cmd/peerbench)
	log "peerbench fan-out 8 with logging hooks"
	rm -rf "$OUT/pb-hooks8"
	(cd "$PEERBENCH_DIR" && CADRE_BIN=$OUT/cadre "$OUT/peerbench" once -adapter "$ROOT/scripts/peerbench/cadre-hooks.json" -n 8 \
		-out "$OUT/pb-hooks8" >"$OUT/pb-hooks8.log" 2>&1) || { cat "$OUT/pb-hooks8.log"; exit 1; }
	python3 - "$OUT/pb-hooks8/cadre-hooks" 8 <<'PY'
import collections, glob, json, os, sys
run, n = sys.argv[1], int(sys.argv[2])
log = [json.loads(l) for l in open(os.path.join(run, "n%d-run0" % n, "hooks.log")) if l.strip()]
ids = {os.path.basename(p)[len("agent-"):-len(".meta.json")] for p in glob.glob(os.path.join(run, "home", ".local", "state", "cadre", "projects", "*", "*", "agent-*.meta.json"))}
counts = collections.Counter((e["event"], e["agent_id"]) for e in log)
want = collections.Counter({(ev, i): 1 for i in ids for ev in ("SubagentStart", "SubagentStop", "PreToolUse")})
bad = [e for e in log if e["agent_type"] != "general-purpose" or (e["event"] == "PreToolUse") != (e["tool"] == "Read")]
print("children %d, log lines %d, every child's start, stop and Read logged once: %s" % (len(ids), len(log), len(ids) == n and counts == want and not bad))
sys.exit(0 if len(ids) == n and counts == want and not bad else 1)
PY
	log "peerbench fan-out 16: cadre, cadre-noop-hook ($RUNS runs each)"
	local ad=$OUT/adapters-hooks
	mkdir -p "$ad"
	cp "$PEERBENCH_DIR/adapters/cadre.json" "$ROOT/scripts/peerbench/cadre-noop-hook.json" "$ad/"
	rm -rf "$OUT/pb-hooks16"
	(cd "$PEERBENCH_DIR" && CADRE_BIN=$OUT/cadre "$OUT/peerbench" bench -adapters "$ad" -peers cadre,cadre-noop-hook -n 16 -runs "$RUNS" \
		-startup-runs 1 -out "$OUT/pb-hooks16" -md "$OUT/pb-hooks16/tables.md" >"$OUT/pb-hooks16.log" 2>&1) || { cat "$OUT/pb-hooks16.log"; exit 1; }
	cat "$OUT/pb-hooks16/tables.md"
}

case $what in
all) build; gobench; startup; peer; attr; fork ;;
go) gobench ;;
startup) startup ;;
peer) peer ;;
attr) attr ;;
fork) fork ;;
hooks) hooks ;;
*) echo "usage: $0 [all|go|startup|peer|attr|fork|hooks]" >&2; exit 2 ;;
esac
log "done; outputs in $OUT (repository: $ROOT)"
