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
# Usage (root, real BPF): tests/mutants/run.sh [--all] [--baseline] [mutant ...]
#   mutant:     a patch's name without .patch (default: every patch here)
#   --all:      run every tests/integration/test_*.py, not only the mutant's files
#   --baseline: first build and run unpatched HEAD the same way; its failures
#               fail the run and are not counted as catching any mutant
#   --build-only: apply and build each mutant, run nothing: one PASS or FAIL
#               line each ("mutant_NAME_builds"), as make test does so that
#               none can rot
# Environment: PT_MUTANT_JOBS (make -j, default 2), PT_MUTANT_TIMEOUT (seconds
# per test file, default 1200).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/mutants"
JOBS=${PT_MUTANT_JOBS:-2}
FILE_TIMEOUT=${PT_MUTANT_TIMEOUT:-1200}

# The files expected to catch each mutant (all of them with --all): FILE.py
# runs the whole file, FILE.py:TEST,TEST those tests of it alone.
files_for() {
    case "$1" in
    csp_constant)    echo test_csp.py test_jvm.py test_options.py ;;
    drop_tenth_wait) echo test_futex.py test_jvm.py test_options.py ;;
    truncated_walk)  echo test_stacks.py ;;
    swapped_stacks)  echo test_futex.py test_jvm.py ;;
    counted_twice)   echo test_futex.py ;;
    sample_weighted_time) echo test_stacks.py ;;
    timeout_as_wakeup) echo test_futex.py test_metrics.py ;;
    wrong_object_class) echo test_jvm.py ;;
    idle_first)      echo test_options.py test_runtimes.py ;;
    folded_row_dropped) echo test_invariants.py test_options.py:default_top_folds_what_would_not_make_it ;;
    lost_recycled_blocker) echo test_invariants.py test_churn.py ;;
    csp_denominator) echo test_csp.py ;;
    stacks_between_blockers) echo test_futex.py test_stacks.py ;;
    *)               echo "" ;;
    esac
}

all=0
baseline=0
build_only=0
names=()
for a in "$@"; do
    case "$a" in
    --all) all=1 ;;
    --baseline) baseline=1 ;;
    --build-only) build_only=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) names+=("${a%.patch}") ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    for p in "$HERE"/*.patch; do
        names+=("$(basename "$p" .patch)")
    done
fi
if [ "$(id -u)" != 0 ] && [ $build_only -eq 0 ]; then
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

# build_and_run NAME PATCH FILES: builds HEAD (with PATCH unless it is empty)
# in a temp dir and runs FILES against it; sets FAILED to "file:test" names.
# Returns 1 when the copy cannot be made or built.
build_and_run() {
    local name=$1 patch_file=$2 files=$3 out rc line n f spec only done_line ran
    FAILED=()
    WORK=$(mktemp -d /tmp/pt-mutant-"$name".XXXXXX)
    git -C "$ROOT" archive HEAD | tar -x -C "$WORK"
    cp -p "$ROOT/vmlinux/vmlinux.h" "$WORK/vmlinux/vmlinux.h"
    if [ -n "$patch_file" ] &&
        ! out=$(cd "$WORK" && patch -p1 --forward --no-backup-if-mismatch <"$patch_file" 2>&1); then
        echo "$out"
        echo "FAIL $name: the patch does not apply to HEAD"
        cleanup
        return 1
    fi
    echo "== $name: building $WORK"
    # --build-only builds what the patch touches, from a copy of this
    # tree's build (its times kept, so make redoes only what the patch
    # changed): the BPF object for a patch of bpf/ alone, else parktrace.
    local target=all
    if [ $build_only -eq 1 ]; then
        target=build/parktrace
        [ -n "$patch_file" ] && ! grep '^+++ ' "$patch_file" | grep -qv '^+++ b/bpf/' &&
            target=build/parktrace.bpf.o
        # Not the fuzz and unit binaries (130 of its 140 MB): copied
        # thirteen times over they were most of make test's mutant builds.
        mkdir -p "$WORK/build"
        for d in "$ROOT"/build/*; do
            case "${d##*/}" in fuzz|tests) ;; *) cp -a "$d" "$WORK/build/" ;; esac
        done
    fi
    if ! out=$(make -C "$WORK" -j"$JOBS" "$target" 2>&1); then
        tail -n 30 <<<"$out"
        echo "FAIL $name: does not build"
        cleanup
        return 1
    fi
    if [ $build_only -eq 1 ]; then
        cleanup
        return 0
    fi
    for spec in $files; do
        # FILE.py, or FILE.py:TEST,TEST... for those tests alone.
        f=${spec%%:*}
        only=()
        [ "$spec" != "$f" ] && IFS=, read -r -a only <<<"${spec#*:}"
        echo "== $name: $spec"
        out=$(PT_BUILD="$WORK/build" timeout "$FILE_TIMEOUT" python3 "$ROOT/tests/integration/$f" "${only[@]}" 2>&1)
        rc=$?
        # As tests/run.sh: a FAIL line, a file that stops before its DONE line,
        # or one that ran fewer tests than it registered.
        while read -r line; do
            [ -n "$line" ] || continue
            echo "   $line"
            n=${line#FAIL }
            FAILED+=("${f%.py}:${n%%:*}")
        done < <(grep '^FAIL' <<<"$out" | cut -c1-300)
        done_line=$(grep '^DONE' <<<"$out" | tail -n 1)
        ran=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) ran.*/\1 \2/p' <<<"$done_line")
        if [ -z "$done_line" ]; then
            echo "   FAIL $f: stopped before its end (exit status $rc)"
            FAILED+=("${f%.py}:(stopped)")
        elif [ -n "$ran" ] && [ "${ran% *}" != "${ran#* }" ]; then
            echo "   FAIL $f: only ${ran% *} of ${ran#* } tests ran"
            FAILED+=("${f%.py}:(not all ran)")
        fi
        echo "   $done_line"
    done
    cleanup
    return 0
}

files_of() {   # files_of MUTANT: the files to run for it
    if [ $all -eq 1 ]; then
        (cd "$ROOT/tests/integration" && ls test_*.py)
    else
        files_for "$1"
    fi
}

status=0
summary=()
declare -A base_failed=()
if [ $baseline -eq 1 ]; then
    # The unpatched HEAD, built and run the same way, with every file the
    # chosen mutants use: a test failing here proves nothing when a mutant
    # fails it too, so it is not counted for them.
    bfiles=$(for m in "${names[@]}"; do files_of "$m"; done | tr ' ' '\n' | sort -u)
    t0=$(date +%s)
    if build_and_run baseline "" "$bfiles"; then
        for t in "${FAILED[@]}"; do
            base_failed[$t]=1
        done
        if [ ${#FAILED[@]} -gt 0 ]; then
            line="BASELINE FAILED: ${#FAILED[@]} failing tests without a mutant (${FAILED[*]})"
            status=1
        else
            line="BASELINE ok: no failing test without a mutant"
        fi
    else
        line="BASELINE FAILED: HEAD does not build"
        status=1
    fi
    echo "$line"
    echo "   (baseline: $(($(date +%s) - t0))s; files: $(echo $bfiles))"
    summary+=("$line")
fi
if [ $build_only -eq 1 ]; then
    # Each build is mostly one compile and a link: as many at once as there
    # are CPUs (make test's 20 minutes), their lines printed in order.
    outs=$(mktemp -d /tmp/pt-mutant-builds.XXXXXX)
    for m in "${names[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
            wait -n
        done
        (
            if [ ! -f "$HERE/$m.patch" ]; then
                echo "FAIL mutant_${m}_builds: no $HERE/$m.patch"
            elif build_and_run "$m" "$HERE/$m.patch" ""; then
                echo "PASS mutant_${m}_builds"
            else
                echo "FAIL mutant_${m}_builds"
            fi
        ) >"$outs/$m" 2>&1 &
    done
    wait
    for m in "${names[@]}"; do
        cat "$outs/$m"
        grep -q '^FAIL' "$outs/$m" && status=1
    done
    rm -rf "$outs"
    exit $status
fi
for m in "${names[@]}"; do
    patch_file="$HERE/$m.patch"
    if [ ! -f "$patch_file" ]; then
        echo "FAIL $m: no $patch_file"
        status=1
        continue
    fi
    files=$(files_of "$m")
    if [ -z "$files" ]; then
        echo "FAIL $m: no test files declared for it in run.sh (use --all)"
        status=1
        continue
    fi
    t0=$(date +%s)
    if ! build_and_run "$m" "$patch_file" "$files"; then
        status=1
        summary+=("FAIL $m: not built")
        [ $build_only -eq 1 ] && echo "FAIL mutant_${m}_builds"
        continue
    fi
    if [ $build_only -eq 1 ]; then
        echo "PASS mutant_${m}_builds"
        continue
    fi
    caught=()
    also=()
    for t in "${FAILED[@]}"; do
        if [ -n "${base_failed[$t]:-}" ]; then
            also+=("$t")
        else
            caught+=("$t")
        fi
    done
    if [ ${#caught[@]} -gt 0 ]; then
        line="CAUGHT $m: ${#caught[@]} failing tests (${caught[*]})"
    else
        line="SURVIVED $m"
        status=1
    fi
    [ ${#also[@]} -gt 0 ] && line+=" [not counted, failing without the mutant too: ${also[*]}]"
    echo "$line"
    echo "   ($m: $(($(date +%s) - t0))s; files: $(echo $files))"
    summary+=("$line")
done

echo "== summary"
for l in "${summary[@]}"; do
    echo "$l"
done
exit $status
