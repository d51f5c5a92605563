// The per-rank half of the task seam (docs/design.md, "Tasks"): a TaskRunner runs one trial
// collectively on its trial group and reports every epoch (or step) through the epoch gate; a
// TaskRegistry pairs each kind of task's torch-free description (hpo/task_catalog.hpp) with the
// factory that prepares its runner on every rank. The sweep runtime (group loop, coordinator,
// study) only ever sees these two interfaces: the built-in libtorch tasks and command trials are
// registered here exactly as a user's own task would be.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/epoch_gate.hpp"
#include "hpo/status.hpp"
#include "hpo/task_catalog.hpp"
#include "hpo/trial.hpp"

namespace hpo {

// This rank's trial group (hpo/mpi/group_layout.hpp: its MPI communicator, rank in the group,
// node-local rank), for runners that run collectives of their own.
struct GroupLayout;

// What the runtime gives a runner for one trial. Same trial on every rank of the group.
struct TrialContext {
  const GroupLayout& layout;  // this rank's group (group_comm, rank_in_group, node-local rank)
  // AfterEpoch is collective over the group; ReportFromLeader is for the leader alone.
  EpochGate& gate;
  const std::string& output;  // the sweep's output folder (a shared file system on clusters)
};

// What the best trial leaves for the study: test-split metrics (attribute name -> value, e.g.
// test_accuracy), tables (e.g. the confusion matrix, stored as /test_NAME) and where its model is
// (empty when the task keeps none).
struct BestTrialReport {
  std::vector<std::pair<std::string, double>> test_metrics;
  std::vector<MetricTable> test_tables;
  std::string model_path;
};

// One rank's runner of one kind of task, prepared once per sweep (data loaded once) and reused by
// every trial its group runs. Used by one thread.
class TaskRunner {
 public:
  virtual ~TaskRunner() = default;

  // Collective over context.layout.group_comm: every rank of the group calls it with the same
  // trial. Reports each epoch (step) through context.gate and returns the outcome: completed,
  // stopped (the gate said so), failed (the trial's own fault: the sweep goes on) or running
  // (interrupted by a preemption signal; it continues on resume). A non-OK Status fails the trial
  // with its message. Anything thrown ends the job.
  virtual Status RunTrial(const TrialSpec& trial, const TrialContext& context,
                          TrialOutcome* outcome) = 0;

  // World rank 0 alone, after every group is done: evaluates the best trial on the task's held-out
  // test split. Tasks without one leave `report` empty.
  virtual Status EvaluateBest(const TrialResult& best, const std::string& output,
                              BestTrialReport* report) = 0;
};

// Prepares this rank's runner. Called once per sweep on every rank, all at the same point (it may
// use collectives over layout.group_comm). A non-OK Status ends the job with that message.
using TaskRunnerFactory = std::function<Status(const SweepConfig& config, const GroupLayout& layout,
                                               std::unique_ptr<TaskRunner>* runner)>;

// The kinds of task a run knows. Build it before the sweep starts; read-only afterwards. Copyable:
// a program adds its own tasks to a copy of BuiltinTaskRegistry() (hpo/main.hpp).
class TaskRegistry {
 public:
  // Adds a kind of task under description->name().
  void Add(std::shared_ptr<const TaskDescription> description, TaskRunnerFactory factory);

  const TaskCatalog& catalog() const { return catalog_; }
  // nullptr when no task of that name was added.
  const TaskRunnerFactory* FindFactory(const std::string& name) const;

 private:
  TaskCatalog catalog_;
  std::map<std::string, TaskRunnerFactory> factories_;
};

// The built-in tasks (core/src/tasks/builtin_tasks.def): fashion_mnist, synthetic, torchscript and
// text_classification (the libtorch trainer) and command (the user's own program).
const TaskRegistry& BuiltinTaskRegistry();

}  // namespace hpo
