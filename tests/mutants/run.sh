#!/usr/bin/env bash
# Mutation check of the integration tests (issue #13): each tests/mutants/*.patch
# is a small, realistic bug. For each one, HEAD is copied to a temp dir (with
# the main tree's vmlinux/vmlinux.h, so it is not regenerated), the patch is
# applied, the copy is built (make -j2 all: parktrace, C and Java workloads),
# and the integration files that should catch it run from this tree against
# the copy's build (PT_BUILD=<copy>/build). Prints per mutant
#   CAUGHT <mutant>: <n> failing tests (<names...>)   or   SURVIVED <mutant>
# and exits 1 if any mutant survived or did not build.
#
# Usage (root, real BPF): tests/mutants/run.sh [--all] [mutant ...]
#   mutant: a patch's name without .patch (default: every patch here)
#   --all:  run every tests/integration/test_*.py, not only the mutant's files
# Environment: PT_MUTANT_JOBS (make -j, default 2), PT_MUTANT_TIMEOUT (seconds
# per test file, default 1200).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/mutants"
JOBS=${PT_MUTANT_JOBS:-2}
FILE_TIMEOUT=${PT_MUTANT_TIMEOUT:-1200}

# The files expected to catch each mutant (all of them with --all).
files_for() {
    case "$1" in
    csp_constant)    echo test_csp.py test_jvm.py test_options.py ;;
    drop_tenth_wait) echo test_futex.py test_jvm.py test_options.py ;;
    truncated_walk)  echo test_stacks.py ;;
    swapped_stacks)  echo test_futex.py test_jvm.py ;;
    *)               echo "" ;;
    esac
}

all=0
names=()
for a in "$@"; do
    case "$a" in
    --all) all=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) names+=("${a%.patch}") ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    for p in "$HERE"/*.patch; do
        names+=("$(basename "$p" .patch)")
    done
fi
if [ "$(id -u)" != 0 ]; then
    echo "FAIL mutants: needs root (real BPF)"
    exit 1
fi
if [ ! -s "$ROOT/vmlinux/vmlinux.h" ]; then
    echo "FAIL mutants: no $ROOT/vmlinux/vmlinux.h (run make all first)"
    exit 1
fi

WORK=""
cleanup() {
    [ -n "$WORK" ] && rm -rf "$WORK"
    WORK=""
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

status=0
summary=()
for m in "${names[@]}"; do
    patch_file="$HERE/$m.patch"
    if [ ! -f "$patch_file" ]; then
        echo "FAIL $m: no $patch_file"
        status=1
        continue
    fi
    if [ $all -eq 1 ]; then
        files=$(cd "$ROOT/tests/integration" && ls test_*.py)
    else
        files=$(files_for "$m")
    fi
    if [ -z "$files" ]; then
        echo "FAIL $m: no test files declared for it in run.sh (use --all)"
        status=1
        continue
    fi
    t0=$(date +%s)
    WORK=$(mktemp -d /tmp/pt-mutant-"$m".XXXXXX)
    git -C "$ROOT" archive HEAD | tar -x -C "$WORK"
    cp -p "$ROOT/vmlinux/vmlinux.h" "$WORK/vmlinux/vmlinux.h"
    if ! out=$(cd "$WORK" && patch -p1 --forward --no-backup-if-mismatch <"$patch_file" 2>&1); then
        echo "$out"
        echo "FAIL $m: the patch does not apply to HEAD"
        status=1
        cleanup
        continue
    fi
    echo "== $m: building $WORK"
    if ! out=$(make -C "$WORK" -j"$JOBS" all 2>&1); then
        tail -n 30 <<<"$out"
        echo "FAIL $m: the mutant does not build"
        status=1
        cleanup
        continue
    fi
    failed=()
    for f in $files; do
        echo "== $m: $f"
        out=$(PT_BUILD="$WORK/build" timeout "$FILE_TIMEOUT" python3 "$ROOT/tests/integration/$f" 2>&1)
        rc=$?
        # As tests/run.sh: a FAIL line, a file that stops before its DONE line,
        # or one that ran fewer tests than it registered.
        while read -r line; do
            [ -n "$line" ] || continue
            echo "   $line"
            n=${line#FAIL }
            failed+=("${f%.py}:${n%%:*}")
        done < <(grep '^FAIL' <<<"$out" | cut -c1-300)
        done_line=$(grep '^DONE' <<<"$out" | tail -n 1)
        ran=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) ran.*/\1 \2/p' <<<"$done_line")
        if [ -z "$done_line" ]; then
            echo "   FAIL $f: stopped before its end (exit status $rc)"
            failed+=("${f%.py}:(stopped, status $rc)")
        elif [ -n "$ran" ] && [ "${ran% *}" != "${ran#* }" ]; then
            echo "   FAIL $f: only ${ran% *} of ${ran#* } tests ran"
            failed+=("${f%.py}:(only ${ran% *} of ${ran#* } ran)")
        fi
        echo "   $done_line"
    done
    cleanup
    secs=$(($(date +%s) - t0))
    if [ ${#failed[@]} -gt 0 ]; then
        line="CAUGHT $m: ${#failed[@]} failing tests (${failed[*]})"
    else
        line="SURVIVED $m"
        status=1
    fi
    echo "$line"
    echo "   ($m: ${secs}s; files: $(echo $files))"
    summary+=("$line")
done

echo "== summary"
for l in "${summary[@]}"; do
    echo "$l"
done
exit $status
