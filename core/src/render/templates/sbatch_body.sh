# ---------------------------------------------------------------------------------------------
# The body of every sbatch script `hpo render sbatch` writes. It follows the #SBATCH lines and
# four variables set by the renderer:
#   HPO_DEFAULT_CONFIG  the config given to render (relative paths: to the submit directory)
#   HPO_DEFAULT_OUTPUT  the study's output folder (idem)
#   HPO_LAUNCHER        mpirun | srun (srun --mpi=pmix)
#   HPO_PREEMPTIBLE     1 when rendered with --preemptible (--requeue --signal=B:USR1@120)
#
# Usage:
#   sbatch SCRIPT [CONFIG [OUTPUT]]
#   HPO_CONFIG=... HPO_OUTPUT=... sbatch SCRIPT
#   sbatch --array=0-2 SCRIPT a.yaml b.yaml c.yaml     (one study per array task, see below)
# The config and output folder come from the arguments, else $HPO_CONFIG / $HPO_OUTPUT, else the
# defaults above; relative paths are taken from the directory sbatch was run in
# ($SLURM_SUBMIT_DIR). The study is OUTPUT/study.h5.
#
# Job arrays: when SLURM_ARRAY_TASK_ID is set, every argument is a config: task N runs the N-th
# (counting from 0, so submit with --array=0-(count-1)); with one or no argument every task runs
# that config (or $HPO_CONFIG / the default). Each task writes its own study to
# OUTPUT/task_N (OUTPUT from $HPO_OUTPUT or the default).
#
# Environment it reads:
#   HPO_BIN          the hpo binary (else `hpo` on PATH, else $SLURM_SUBMIT_DIR/build/hpo)
#   HPO_MPIRUN_ARGS  extra mpirun arguments, split at spaces (e.g. "--mca btl self,vader,tcp")
#   HPO_MPIRUN_WRAPPER  hpo-mpirun, which runs mpirun and ends it once hpo has ended the job
#                    (default: hpo-mpirun beside hpo, on PATH, or scripts/hpo-mpirun in the
#                    submit directory; `none`, or none found: plain mpirun)
#   HPO_SRUN_ARGS    extra srun arguments, split at spaces (HPO_LAUNCHER=srun)
#   HPO_MAX_RESTARTS after a lost host (exit 4) the job requeues itself unless it has restarted
#                    this many times (default 5)
#   SLURM_CPUS_PER_TASK -> OMP_NUM_THREADS (1 when unset); OMP_WAIT_POLICY defaults to passive,
#                    OMPI_MCA_hwloc_base_binding_policy (mpirun's --bind-to) to none.
#
# It always runs `hpo sweep --config C --output O --resume`, so a first run starts the study and
# every later run (a requeued job, or the same job submitted again) continues it.
#
# Signals. The launcher runs in the background while this shell waits for it, so the shell can
# act on signals at once (bash runs a trap only after the foreground command ends):
#   SIGUSR1 ("save and come back": --signal=B:USR1@120 before the time limit, or
#            `scancel --signal=USR1 --batch JOB`) and
#   SIGTERM ("save and stop": `scancel --batch --signal=TERM JOB`, or what Slurm sends on a
#            cancel, a preemption or at the time limit)
# are both passed on as SIGUSR1 to the launcher (Open MPI's mpirun and srun forward SIGUSR1 to
# the ranks; mpirun would answer SIGTERM by killing them, and Open MPI 4.1 cannot be told to
# forward SIGTERM). The ranks checkpoint and hpo exits with 3 ("interrupted but saved").
# When HPO_PREEMPTIBLE=1 and the sweep exited 3 after a SIGUSR1 (the last signal decides), the
# job requeues itself (`scontrol requeue $SLURM_JOB_ID`); the next run resumes the study by
# itself. Not after a SIGTERM: that is a cancel (or Slurm's own preemption, which requeues a
# requeueable job itself). Slurm holds a requeued job back before it starts it again: its
# BeginTime is set to now + the job credential lifetime + 1 s (121 s by default), and it starts
# at the scheduler's next pass after that.
# Note: a plain `scancel JOB` (and Slurm's preemption) sends SIGTERM to every process of the
# job, mpirun included, and mpirun then kills the ranks (exit 1; the study keeps every finished
# trial and the trials' last per-epoch checkpoints). To stop a job and save it, signal the
# batch shell only: `scancel --batch --signal=TERM JOB` (or --signal=USR1 to requeue it).
#
# Lost hosts. When hpo loses contact with a node's ranks (the node down or cut off: exit 4
# after the config's peer_timeout_s, the study saved; hpo-mpirun also exits 4 when mpirun saw
# the node's daemon die and ended the job first), the job requeues itself (`scontrol requeue`),
# in every script, preemptible or not, unless it has already restarted HPO_MAX_RESTARTS times
# (default 5; SLURM_RESTART_COUNT counts every requeue). Slurm completes the requeue once the
# lost node answers again or is marked DOWN (SlurmdTimeout), and starts the job again once it
# has as many nodes as before (another node of the partition, or the lost one back; a requeued
# job keeps its node and task counts even when submitted with --nodes=MIN-MAX:
# `scontrol update jobid=N NumNodes=K NumTasks=M` while it is pending makes it smaller). The
# next run resumes the study, on whatever number of ranks it gets.
# Add --open-mode=append to keep the first run's log (a requeue truncates it otherwise).
#
# Exit code: hpo's (0 done, 1 failure, 2 bad input, 3 interrupted but saved, 4 a host lost),
# 2 when this script is given bad arguments or cannot find hpo.
# ---------------------------------------------------------------------------------------------

hpo_say() { printf 'hpo-sbatch: %s\n' "$*"; }
hpo_fail() { printf 'hpo-sbatch: error: %s\n' "$*" >&2; exit 2; }

# A path as given, or relative to the submit directory.
hpo_abspath() {
  case "$1" in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "${SLURM_SUBMIT_DIR:-$PWD}" "$1" ;;
  esac
}

# ---- what to run -----------------------------------------------------------------------------
hpo_config="${HPO_CONFIG:-$HPO_DEFAULT_CONFIG}"
hpo_output="${HPO_OUTPUT:-$HPO_DEFAULT_OUTPUT}"
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
  hpo_task="$SLURM_ARRAY_TASK_ID"
  if [ "$#" -gt 1 ]; then
    hpo_configs=("$@")
    if [ "$hpo_task" -ge "$#" ]; then
      hpo_fail "array task $hpo_task has no config: $# configs given (${hpo_configs[*]});" \
        "submit with --array=0-$(($# - 1))"
    fi
    hpo_config="${hpo_configs[$hpo_task]}"
  elif [ "$#" -eq 1 ]; then
    hpo_config="$1"
  fi
  hpo_output="${hpo_output%/}/task_$hpo_task"
else
  if [ "$#" -gt 2 ]; then
    hpo_fail "too many arguments ($#): expected [CONFIG [OUTPUT]]" \
      "(several configs need a job array: sbatch --array=0-$(($# - 1)) ...)"
  fi
  hpo_config="${1:-$hpo_config}"
  hpo_output="${2:-$hpo_output}"
fi
[ -n "$hpo_config" ] || hpo_fail "no config: pass one as the first argument or set HPO_CONFIG"
[ -n "$hpo_output" ] || hpo_fail "no output folder: pass one as the second argument or set HPO_OUTPUT"
hpo_config="$(hpo_abspath "$hpo_config")"
hpo_output="$(hpo_abspath "$hpo_output")"

# ---- the binary ------------------------------------------------------------------------------
if [ -n "${HPO_BIN:-}" ]; then
  hpo_bin="$HPO_BIN"
elif command -v hpo >/dev/null 2>&1; then
  hpo_bin="$(command -v hpo)"
else
  hpo_bin="${SLURM_SUBMIT_DIR:-$PWD}/build/hpo"
fi
[ -x "$hpo_bin" ] || hpo_fail "hpo binary not found or not executable: $hpo_bin" \
  "(set HPO_BIN, put hpo on PATH, or build it in ${SLURM_SUBMIT_DIR:-$PWD}/build)"

# ---- threads ---------------------------------------------------------------------------------
export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"
# libgomp busy-waits by default, which slows training on a loaded node (see docs/clusters.md,
# "Threads and BLAS").
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
# mpirun --bind-to none unless set (HPO_MPIRUN_ARGS="--bind-to core" still wins): Open MPI binds
# each rank of a 2-rank job to one core by default, where a rank's threads (training, heartbeat,
# coordinator) starve on a busy node.
export OMPI_MCA_hwloc_base_binding_policy="${OMPI_MCA_hwloc_base_binding_policy:-none}"

# ---- the command -----------------------------------------------------------------------------
hpo_sweep=("$hpo_bin" sweep --config "$hpo_config" --output "$hpo_output" --resume)
case "$HPO_LAUNCHER" in
  mpirun)
    read -r -a hpo_extra <<<"${HPO_MPIRUN_ARGS:-}"
    # Inside the allocation Open MPI reads the nodes and slots from the Slurm environment.
    # Through hpo-mpirun where there is one: after hpo ends the job (a lost node: exit 4), mpirun
    # can wait many minutes on the TCP connection to the lost node's daemon; hpo-mpirun kills
    # it HPO_MPIRUN_ABORT_GRACE_S (30) seconds later, so the job ends and can be requeued. Under
    # plain mpirun, hpo's rank 0 warns at start-up when the job spans nodes.
    hpo_wrapper="${HPO_MPIRUN_WRAPPER:-}"
    if [ -z "$hpo_wrapper" ]; then
      for hpo_candidate in "$(dirname "$hpo_bin")/hpo-mpirun" "$(command -v hpo-mpirun)" \
          "${SLURM_SUBMIT_DIR:-$PWD}/scripts/hpo-mpirun"; do
        if [ -n "$hpo_candidate" ] && [ -x "$hpo_candidate" ]; then
          hpo_wrapper="$hpo_candidate"
          break
        fi
      done
    fi
    if [ -n "$hpo_wrapper" ] && [ "$hpo_wrapper" != none ]; then
      [ -x "$hpo_wrapper" ] || hpo_fail "HPO_MPIRUN_WRAPPER is not an executable: $hpo_wrapper"
      hpo_cmd=("$hpo_wrapper")
    else
      hpo_cmd=(mpirun)
    fi
    [ -n "${SLURM_NTASKS:-}" ] && hpo_cmd+=(-np "$SLURM_NTASKS")
    hpo_cmd+=(-x OMP_NUM_THREADS -x OMP_WAIT_POLICY "${hpo_extra[@]}" "${hpo_sweep[@]}")
    ;;
  srun)
    read -r -a hpo_extra <<<"${HPO_SRUN_ARGS:-}"
    hpo_cmd=(srun --mpi=pmix "${hpo_extra[@]}" "${hpo_sweep[@]}")
    ;;
  *) hpo_fail "HPO_LAUNCHER must be mpirun or srun, not '$HPO_LAUNCHER'" ;;
esac

hpo_say "---- $(date '+%Y-%m-%d %H:%M:%S') job ${SLURM_JOB_ID:-?}${SLURM_ARRAY_TASK_ID:+ (array task $SLURM_ARRAY_TASK_ID)}," \
  "run $((${SLURM_RESTART_COUNT:-0} + 1)) (restarts: ${SLURM_RESTART_COUNT:-0})," \
  "${SLURM_NTASKS:-?} tasks on ${SLURM_JOB_NODELIST:-$(hostname)}, $OMP_NUM_THREADS thread(s) per task"
hpo_say "config: $hpo_config"
if [ -e "$hpo_output/study.h5" ]; then
  hpo_say "study:  $hpo_output/study.h5 (exists: resuming it)"
else
  hpo_say "study:  $hpo_output/study.h5 (new)"
fi
hpo_say "running: ${hpo_cmd[*]}"

# ---- run it, passing signals on --------------------------------------------------------------
hpo_pid=""
hpo_signal=""  # the last signal this shell received: USR1 or TERM
hpo_trapped=0  # set by the trap; tells an interrupted `wait` from the launcher's exit
# shellcheck disable=SC2317  # called from the traps below
hpo_forward() {
  hpo_signal="$1"
  hpo_trapped=1
  hpo_say "received SIG$1: asking the sweep to checkpoint and stop (SIGUSR1 to $HPO_LAUNCHER${hpo_pid:+, pid $hpo_pid})"
  if [ -n "$hpo_pid" ]; then
    kill -USR1 "$hpo_pid" 2>/dev/null || true
  fi
}
trap 'hpo_forward USR1' USR1
trap 'hpo_forward TERM' TERM

"${hpo_cmd[@]}" &
hpo_pid=$!
if [ -n "$hpo_signal" ]; then  # a signal came before the launcher started: pass it on now
  kill -USR1 "$hpo_pid" 2>/dev/null || true
fi

# `wait` returns early (status > 128) when a trapped signal arrives: wait again until the
# launcher has really exited. If its status was already collected, `wait` says 127: keep the
# status from before.
hpo_rc=""
while :; do
  hpo_trapped=0
  hpo_status=0
  wait "$hpo_pid" || hpo_status=$?
  if [ "$hpo_status" -eq 127 ] && [ -n "$hpo_rc" ]; then
    break
  fi
  hpo_rc=$hpo_status
  [ "$hpo_trapped" -eq 1 ] || break
done
trap - USR1 TERM

# ---- what it means ---------------------------------------------------------------------------
case "$hpo_rc" in
  0) hpo_say "the sweep is done: $hpo_output/study.h5 (leaderboard: $hpo_bin report $hpo_output/study.h5)" ;;
  2) hpo_say "hpo rejected its input (exit 2): see the message above; not retrying" ;;
  3)
    hpo_say "the sweep was interrupted and saved (exit 3): $hpo_output/study.h5"
    if [ "$HPO_PREEMPTIBLE" = 1 ] && [ "$hpo_signal" = USR1 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
      # Slurm ends this run (SIGTERM to this shell) as soon as the requeue is accepted, so say
      # what happens first.
      hpo_say "requeueing job $SLURM_JOB_ID: its next run resumes the study" \
        "(Slurm holds a requeued job back for two minutes or more before starting it again)"
      if ! scontrol requeue "$SLURM_JOB_ID"; then
        hpo_say "could not requeue job $SLURM_JOB_ID: submit it again with the same arguments" \
          "to resume the study"
      fi
    else
      hpo_say "resume it by submitting the same job again (it passes --resume)"
    fi
    ;;
  4)
    hpo_say "the sweep lost a host (exit 4): the study is saved in $hpo_output/study.h5"
    hpo_max="${HPO_MAX_RESTARTS:-5}"
    if [ -n "${SLURM_JOB_ID:-}" ] && [ "${SLURM_RESTART_COUNT:-0}" -lt "$hpo_max" ]; then
      hpo_say "requeueing job $SLURM_JOB_ID: its next run resumes the study once Slurm has" \
        "marked the lost node down and found it $SLURM_JOB_NUM_NODES node(s)"
      if ! scontrol requeue "$SLURM_JOB_ID"; then
        hpo_say "could not requeue job $SLURM_JOB_ID: submit it again with the same arguments" \
          "to resume the study"
      fi
    else
      hpo_say "not requeueing (restarts: ${SLURM_RESTART_COUNT:-0}, HPO_MAX_RESTARTS=$hpo_max):" \
        "submit the same job again to resume the study"
    fi
    ;;
  *) hpo_say "the sweep failed (exit $hpo_rc)" ;;
esac
exit "$hpo_rc"
