#!/usr/bin/env bash
# The benchmark runner: runs the benchmarks of the registry bench/benchmarks.txt (every C++ and
# Python benchmark under bench/, with its ranks and arguments), in the registry's order, and says
# which it skipped and why. Results are recorded by hand in bench/RESULTS.md (the registry names
# the section of each).
#
#   bench/run.sh [--list] [--long] [--dry-run] [--build DIR] [NAME...]
#
#   NAME...      run only these benchmarks (all of their rows), in the registry's order; a
#                benchmark marked `long` runs when named
#   --list       print the registry as a table (name, kind, ranks, requirements, results section,
#                command) and exit; with NAMEs, only theirs
#   --long       also run the benchmarks that take minutes or more
#   --dry-run    print each run's command, or why it would be skipped here, and run nothing
#   --build DIR  the build folder holding hpo and bench/hpo_bench_* (default: build);
#                `bench/run.sh DIR` (a folder that is no benchmark's name) still works
#
# Each run prints a header line, the command and its output. A run whose requirement is not met
# here (root, network namespaces, a GPU, a Python package, a data folder, --long) prints
# `skipped: needs X` and does not run; so does a Python benchmark that exits 77 (its own skip).
# C++ benchmarks with ranks run as `mpirun --oversubscribe --bind-to none -np N`, and every
# benchmark with OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 and OMP_WAIT_POLICY=passive. After the
# ddp_throughput runs it prints their median samples/s and scaling efficiencies.
# Environment knobs: TRAIN_SAMPLES (default 20000), EPOCHS (1), DISPATCH_TRIALS (2000), PYTHON
# (/usr/bin/python3), and what a row's `env:VAR` names (asha_replay: ASHA_REPLAY_STUDIES, the
# study.h5 files of random sweeps kept by compute_to_target.py --keep).
# Prints the machine first and a summary last. Exits 1 when a benchmark that ran failed (non-zero
# exit, or a result line with check=FAILED), 2 on a usage or registry error, else 0.
set -euo pipefail
caller_dir=$PWD
root=$(cd "$(dirname "$0")/.." && pwd)
registry=bench/benchmarks.txt

usage() { awk '/^#   bench\/run.sh \[/ { on = 1 } /^# Each run prints/ { exit } on' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "run.sh: $*" >&2; exit 2; }

build=build
build_given=0
list=0
long=0
dry_run=0
names=()
while (($#)); do
  case $1 in
    --list) list=1 ;;
    --long) long=1 ;;
    --dry-run) dry_run=1 ;;
    --build) [ $# -ge 2 ] || die "--build needs a folder"; build=$2; build_given=1; shift ;;
    --build=*) build=${1#--build=}; build_given=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option $1" ;;
    *) names+=("$1") ;;
  esac
  shift
done

cd "$root"
export TRAIN_SAMPLES=${TRAIN_SAMPLES:-20000} EPOCHS=${EPOCHS:-1}
export DISPATCH_TRIALS=${DISPATCH_TRIALS:-2000}
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

# The registry, one array element per row.
r_name=() r_source=() r_kind=() r_ranks=() r_requires=() r_results=() r_args=() r_line=()
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
lineno=0
declare -A last_row_of=()
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
  # The `|` appended keeps an empty last column (a benchmark without arguments).
  IFS='|' read -r -a fields <<<"$line|"
  ((${#fields[@]} == 7)) || die "$registry:$lineno: ${#fields[@]} columns, not 7: $line"
  for i in "${!fields[@]}"; do fields[i]=$(trim "${fields[i]}"); done
  name=${fields[0]} source=${fields[1]} kind=${fields[2]} ranks=${fields[3]} requires=${fields[4]}
  [[ $name =~ ^[a-z0-9_]+$ ]] || die "$registry:$lineno: bad name '$name'"
  [ -f "$source" ] || die "$registry:$lineno: $source does not exist"
  case $kind:$source in
    c++:*.cpp | python:*.py) ;;
    *) die "$registry:$lineno: kind '$kind' does not fit $source (c++ for .cpp, python for .py)" ;;
  esac
  [[ $ranks == - || $ranks =~ ^[1-9][0-9]*$ ]] || die "$registry:$lineno: ranks '$ranks' (N or -)"
  if [ "$requires" != - ]; then
    IFS=, read -r -a needs <<<"$requires"
    for need in "${needs[@]}"; do
      [[ $need =~ ^(root|netns|long|gpu:[1-9][0-9]*|py:[A-Za-z_][A-Za-z0-9_.]*|cmd:[^[:space:]]+|path:[^[:space:]]+|env:[A-Za-z_][A-Za-z0-9_]*)$ ]] ||
        die "$registry:$lineno: unknown requirement '$need'"
    done
  fi
  # Rows of one benchmark are consecutive, so that it runs as one block.
  if [ -n "${last_row_of[$name]:-}" ] && [ "${r_name[-1]}" != "$name" ]; then
    die "$registry:$lineno: the rows of $name are not consecutive"
  fi
  last_row_of[$name]=${#r_name[@]}
  r_name+=("$name") r_source+=("$source") r_kind+=("$kind") r_ranks+=("$ranks")
  r_requires+=("$requires") r_results+=("${fields[5]}") r_args+=("${fields[6]}") r_line+=("$lineno")
done <"$registry"
((${#r_name[@]} > 0)) || die "$registry holds no benchmark"

# `bench/run.sh DIR`, the form before the registry: a folder that is no benchmark's name.
if ((${#names[@]} == 1)) && [ -z "${last_row_of[${names[0]}]:-}" ] &&
  { [ -d "${names[0]}" ] || [ -d "$caller_dir/${names[0]}" ]; }; then
  build=${names[0]}
  build_given=1
  names=()
fi
# A relative build folder is the caller's, when run.sh was started outside the repository root.
if ((build_given)) && [[ $build != /* ]] && [ "$caller_dir" != "$root" ]; then
  build=$caller_dir/$build
fi
declare -A wanted=()
for name in "${names[@]}"; do
  [ -n "${last_row_of[$name]:-}" ] || die "no benchmark '$name' in $registry (bench/run.sh --list)"
  wanted[$name]=1
done
selected() { ((${#names[@]} == 0)) || [ -n "${wanted[$1]:-}" ]; }

# The add_executable target of bench/CMakeLists.txt built from a source file; empty if none.
target_of() {
  local file=${1#bench/}
  sed -n -E 's/^[[:space:]]*add_executable\(([A-Za-z0-9_]+)[[:space:]]+([^[:space:])]+)\).*/\1 \2/p' \
    bench/CMakeLists.txt | awk -v file="$file" '$2 == file { print $1; exit }'
}

# Row $1's command into the array `command`: VAR=VALUE words first (through env), then mpirun
# when it has ranks, then the program and its arguments, {build} and {VAR} filled in.
make_command() {
  local row=$1 args=${r_args[$1]} word var program target
  args=${args//\{build\}/$build}
  while [[ $args =~ \{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
    var=${BASH_REMATCH[1]}
    args=${args//"{$var}"/${!var:-\$$var}}
  done
  local words=() env_words=()
  set -f
  read -r -a words <<<"$args"
  set +f
  while ((${#words[@]} > 0)) && [[ ${words[0]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
    env_words+=("${words[0]}")
    words=("${words[@]:1}")
  done
  if [ "${r_kind[row]}" = c++ ]; then
    target=$(target_of "${r_source[row]}")
    program=("$build/bench/${target:-"(no add_executable for ${r_source[row]#bench/} in bench/CMakeLists.txt)"}")
  else
    program=("$PYTHON" "${r_source[row]}")
  fi
  command=()
  if ((${#env_words[@]} > 0)); then command+=(env "${env_words[@]}"); fi
  if [ "${r_ranks[row]}" != - ]; then
    command+=(mpirun --oversubscribe --bind-to none -np "${r_ranks[row]}")
  fi
  command+=("${program[@]}" "${words[@]}")
}

if ((list)); then
  {
    printf 'NAME\tKIND\tRANKS\tREQUIRES\tRESULTS (RESULTS.md section)\tCOMMAND\n'
    for row in "${!r_name[@]}"; do
      selected "${r_name[row]}" || continue
      make_command "$row"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${r_name[row]}" "${r_kind[row]}" "${r_ranks[row]}" \
        "${r_requires[row]}" "${r_results[row]}" "${command[*]}"
    done
  } | awk -F '\t' '
    { for (i = 1; i <= NF; ++i) { cell[NR, i] = $i; if (length($i) > width[i]) width[i] = length($i) } }
    END { for (r = 1; r <= NR; ++r) {
            line = ""
            for (i = 1; i < 6; ++i) line = line sprintf("%-" width[i] "s  ", cell[r, i])
            print line cell[r, 6] } }'
  exit 0
fi

# Why row $1 cannot run here ("root, Python module torch"), empty when it can. Answers are cached.
declare -A unmet_cache=()
check_need() {
  local need=$1 count why
  case $need in
    root) [ "$(id -u)" -eq 0 ] || echo "root" ;;
    netns)
      why=$("$PYTHON" -c 'import sys; sys.path.insert(0, "tests/multinode")
import netns_testbed; print(netns_testbed.unavailable() or "")' 2>&1) || why="tests/multinode's test bed did not load: $why"
      [ -z "$why" ] || echo "network namespaces ($why)" ;;
    gpu:*)
      count=$( { nvidia-smi -L 2>/dev/null || true; } | grep -c '^GPU' || true)
      if ((count < ${need#gpu:})); then
        if [ "$need" = gpu:1 ]; then echo "a GPU ($count here)"; else echo "${need#gpu:} GPUs ($count here)"; fi
      fi ;;
    py:*) "$PYTHON" -c "import ${need#py:}" >/dev/null 2>&1 || echo "Python module ${need#py:} ($PYTHON)" ;;
    cmd:*) command -v "${need#cmd:}" >/dev/null || echo "${need#cmd:} on PATH" ;;
    path:*) [ -e "${need#path:}" ] || echo "${need#path:}" ;;
    env:*) var=${need#env:}; [ -n "${!var:-}" ] || echo "\$$var" ;;
    long) ((long)) || [ -n "${wanted[${current}]:-}" ] || echo "--long (it takes minutes or more)" ;;
  esac
}
unmet_needs() {
  local row=$1 need reasons=()
  [ "${r_requires[row]}" = - ] && return 0
  IFS=, read -r -a needs <<<"${r_requires[row]}"
  for need in "${needs[@]}"; do
    if [ -z "${unmet_cache[$need]+set}" ] || [ "$need" = long ]; then
      unmet_cache[$need]=$(check_need "$need")
    fi
    if [ -n "${unmet_cache[$need]}" ]; then reasons+=("${unmet_cache[$need]}"); fi
  done
  local IFS=';'
  local joined="${reasons[*]}"
  echo "${joined//;/, }"
}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# libgomp's threads spin while waiting for work by default; with more than one thread per rank on
# a busy machine that makes training about 10x slower. Passive waiting sleeps instead.
export OMP_WAIT_POLICY=passive

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "nproc: $(nproc)"
echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
echo "uptime: $(uptime)"
echo "mpirun: $( (mpirun --version 2>/dev/null || echo 'not found') | head -n 1)"
echo "build: $build"
echo

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A status_of=()
order=()
failed=0

# The median samples_per_s of the DDP runs with $1 ranks x $2 threads; empty when there are none.
median_samples_per_s() {
  { grep "^bench=ddp_throughput ranks=$1 threads_per_rank=$2 " "$work/ddp_throughput.log" || true; } |
    sed -E 's/.* samples_per_s=([^ ]+).*/\1/' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR > 0) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
summarize_ddp() {
  [ -s "$work/ddp_throughput.log" ] || return 0
  awk -v a="$(median_samples_per_s 1 2)" -v b="$(median_samples_per_s 2 1)" \
      -v c="$(median_samples_per_s 1 1)" 'BEGIN {
    if (a == "" || b == "" || c == "") { print "no medians: a configuration produced no result"; exit }
    printf "median samples/s: 1x2 %.1f, 2x1 %.1f, 1x1 %.1f\n", a, b, c
    printf "scaling efficiency 2x1 / 1x2: %.3f\n", b / a
    printf "scaling efficiency 2x1 / (2 x 1x1): %.3f\n", b / (2 * c)
  }'
}

# Adds $2 to benchmark $1's summary; a failure outranks a run, a run outranks a skip.
note() {
  local name=$1 what=$2 old=${status_of[$1]:-}
  if [ -z "$old" ]; then order+=("$name"); status_of[$name]=$what; return; fi
  case $what:$old in
    failed*:failed*) ;;
    failed*:*) status_of[$name]=$what ;;
    ok:failed* | ok:ok) ;;
    ok:*) status_of[$name]=ok ;;
    skipped*:*) ;;
  esac
}

current=
runs_of_current=0
for row in "${!r_name[@]}"; do
  name=${r_name[row]}
  selected "$name" || continue
  if [ "$name" != "$current" ]; then
    if [ "$current" = ddp_throughput ]; then summarize_ddp; fi
    current=$name
    count=0
    for other in "${!r_name[@]}"; do
      if [ "${r_name[other]}" = "$name" ]; then count=$((count + 1)); fi
    done
    runs_of_current=0
    echo "== $name: ${r_source[row]} ($count run$([ "$count" = 1 ] || echo s); RESULTS.md: ${r_results[row]})"
  fi
  runs_of_current=$((runs_of_current + 1))
  make_command "$row"
  unmet=$(unmet_needs "$row")
  if [ -n "$unmet" ]; then
    echo "-- $name run $runs_of_current: skipped: needs $unmet"
    note "$name" "skipped: needs $unmet"
    continue
  fi
  missing=()
  for word in "${command[@]}"; do
    if [[ $word == "$build"/* ]] && [ ! -e "$word" ]; then
      missing+=("$word")
    fi
  done
  echo "+ ${command[*]}"
  if ((${#missing[@]} > 0)); then
    echo "run.sh: $name: not built: ${missing[*]} (scripts/build.sh, or cmake -S . -B $build -DHPO_BUILD_BENCHMARKS=ON && cmake --build $build)" >&2
    note "$name" "failed: not built"
    failed=1
    continue
  fi
  if ((dry_run)); then
    note "$name" ok
    continue
  fi
  out=$work/run.log
  set +e
  "${command[@]}" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  set -e
  cat "$out" >>"$work/$name.log"
  if [ "$rc" -eq 77 ] && [ "${r_kind[row]}" = python ]; then
    echo "-- $name run $runs_of_current: skipped: $(tail -n 1 "$out")"
    note "$name" "skipped: $(tail -n 1 "$out")"
  elif [ "$rc" -ne 0 ]; then
    echo "run.sh: $name failed (exit $rc)" >&2
    note "$name" "failed: exit $rc"
    failed=1
  elif grep -q "check=FAILED" "$out"; then
    echo "run.sh: $name: a result line says check=FAILED" >&2
    note "$name" "failed: check=FAILED"
    failed=1
  else
    note "$name" ok
  fi
done
if [ "$current" = ddp_throughput ]; then summarize_ddp; fi

echo
echo "== summary"
for name in "${order[@]}"; do
  status=${status_of[$name]}
  if ((dry_run)) && [ "$status" = ok ]; then status="would run"; fi
  printf '%-22s %s\n' "$name" "$status"
done
exit "$failed"
