// The MPI runtime on real ranks: group layout, the group data plane, the control plane.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <string>

#include "coord/coordinator.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/task_catalog.hpp"
#include "mpi/control_plane.hpp"
#include "mpi/mpi_collectives.hpp"
#include "runtime/sweep_session.hpp"
#include "tasks/classifier_description.hpp"

namespace hpo {
namespace {

// The value of Open MPI's integer control variable `name` through the MPI tool interface; false
// when the library has no such variable.
bool ReadIntegerControlVariable(const std::string& name, int* value) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return false;
  int count = 0;
  MPI_T_cvar_get_num(&count);
  bool found = false;
  for (int index = 0; index < count && !found; ++index) {
    char variable[256];
    int variable_length = sizeof(variable);
    char description[1024];
    int description_length = sizeof(description);
    int verbosity = 0;
    int bind = 0;
    int scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumeration = MPI_T_ENUM_NULL;
    if (MPI_T_cvar_get_info(index, variable, &variable_length, &verbosity, &type, &enumeration,
                            description, &description_length, &bind, &scope) != MPI_SUCCESS ||
        name != variable || type != MPI_INT) {
      continue;
    }
    MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
    int elements = 0;
    found = MPI_T_cvar_handle_alloc(index, nullptr, &handle, &elements) == MPI_SUCCESS &&
            MPI_T_cvar_read(handle, value) == MPI_SUCCESS;
    MPI_T_cvar_handle_free(&handle);
  }
  MPI_T_finalize();
  return found;
}

// MpiSession selects Rabenseifner's MPI_Iallreduce (3) unless mpirun or the environment chose
// another; HPO_TEST_IALLREDUCE_ALGORITHM names the value the test's launcher expects.
TEST(MpiSession, NonBlockingAllreduceAlgorithmIsRabenseifnerUnlessChosen) {
  const char* expected = std::getenv("HPO_TEST_IALLREDUCE_ALGORITHM");
  int algorithm = -1;
  ASSERT_TRUE(ReadIntegerControlVariable("coll_libnbc_iallreduce_algorithm", &algorithm))
      << "Open MPI's libnbc has no coll_libnbc_iallreduce_algorithm";
  EXPECT_EQ(algorithm, expected != nullptr ? std::atoi(expected) : 3);
}

TEST(GroupLayout, WorldSplitsIntoConsecutiveGroupsLedByTheirFirstRank) {
  const Communicator world = Communicator::World();
  ASSERT_EQ(world.size(), 4) << "run with mpirun -np 4";
  GroupLayout layout;
  ASSERT_TRUE(ComputeGroupLayout(world, 2, &layout).ok());
  EXPECT_EQ(layout.num_groups, 2);
  // One node: node-local order is world order.
  EXPECT_EQ(layout.group, world.rank() / 2);
  EXPECT_EQ(layout.rank_in_group, world.rank() % 2);
  EXPECT_EQ(layout.group_comm.size(), 2);
  EXPECT_EQ(layout.node_local_rank, world.rank());
  EXPECT_EQ(layout.group_of_world_rank, (std::vector<int>{0, 0, 1, 1}));
}

TEST(GroupLayout, WorldThatDoesNotDivideIsTheSameErrorOnEveryRank) {
  GroupLayout layout;
  Status status = ComputeGroupLayout(Communicator::World(), 3, &layout);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("start 3 or 6 ranks"), std::string::npos) << status.message();
}

TEST(Communicator, SplitAndDuplicateAreIndependentAndFreed) {
  const Communicator world = Communicator::World();
  Communicator odd_even = world.Split(world.rank() % 2, world.rank());
  EXPECT_EQ(odd_even.size(), 2);
  Communicator copy = odd_even.Duplicate();
  EXPECT_EQ(copy.rank(), odd_even.rank());
  Communicator moved = std::move(copy);
  EXPECT_FALSE(copy.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is defined
  EXPECT_TRUE(moved.valid());
}

TEST(MpiGroupCollectives, AllreduceSumsAndBroadcastCopiesWithinTheGroupOnly) {
  GroupLayout layout;
  ASSERT_TRUE(ComputeGroupLayout(Communicator::World(), 2, &layout).ok());
  MpiGroupCollectives collectives(layout.group_comm);
  const int world_rank = Communicator::World().rank();
  std::vector<float> floats(1000, static_cast<float>(world_rank + 1));
  collectives.AllreduceSum(floats.data(), floats.size());
  const float expected = layout.group == 0 ? 1.0f + 2.0f : 3.0f + 4.0f;
  for (float value : floats) ASSERT_EQ(value, expected);
  std::vector<double> doubles = {0.5 * world_rank, 1.0};
  collectives.AllreduceSum(doubles.data(), doubles.size());
  EXPECT_DOUBLE_EQ(doubles[1], 2.0);
  int payload = layout.rank_in_group == 0 ? 100 + layout.group : -1;
  collectives.Broadcast(&payload, sizeof(payload), 0);
  EXPECT_EQ(payload, 100 + layout.group);
}

// Suggests ids 0, 1, 2, ... with {"lr": id}.
class CountingSearcher final : public Searcher {
 public:
  std::optional<Assignment> Suggest(int64_t trial_id) override {
    return Assignment{{"lr", static_cast<double>(trial_id)}};
  }
  void Observe(int64_t, const Assignment&, TrialStatus, double) override {}
  std::optional<int64_t> SpaceSize() const override { return std::nullopt; }
  std::string SaveState() const override { return {}; }
  Status RestoreState(const std::string&) override { return Status::Ok(); }
};

// Keeps staged rows in memory and counts how many of them each publish covered.
class MemoryStudy final : public StudyWriter {
 public:
  Status Stage(const TrialResult& result) override {
    rows.push_back(result);
    return Status::Ok();
  }
  Status StageTable(const MetricTable&) override { return Status::Ok(); }
  Status Publish(const std::map<std::string, StudyAttribute>&) override {
    published_rows = rows.size();
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }
  std::vector<TrialResult> rows;
  size_t published_rows = 0;
};

TEST(ControlPlane, LeadersGetDistinctTrialsAndRankZeroRecordsEveryResult) {
  const Communicator world = Communicator::World();
  GroupLayout layout;
  ASSERT_TRUE(ComputeGroupLayout(world, 2, &layout).ok());
  SweepConfig config;
  config.execution.task = "synthetic";
  config.metric_names = ClassifierMetricNames();
  config.sweep.metric.name = "val_loss";
  config.sweep.metric.goal = Goal::kMinimize;
  config.sweep.run_cap = 7;

  SweepSession session(world, layout);
  const MemoryStudy* study = nullptr;  // rank 0: the session's
  if (world.rank() == 0) {
    auto memory = std::make_unique<MemoryStudy>();
    study = memory.get();
    CoordinatorDeps deps;
    deps.searcher = std::make_unique<CountingSearcher>();
    deps.clock = [] { return 0.0; };
    session.Coordinate(config, std::move(memory), std::move(deps));
  }
  session.Start();

  LeaderChannel channel(session.control());
  std::vector<int64_t> mine;
  for (;;) {
    ControlMessage assignment;
    if (layout.rank_in_group == 0) {
      ControlMessage request;
      request.kind = MessageKind::kRequestTrial;
      assignment = channel.Exchange(request);
    }
    BroadcastMessage(layout.group_comm, 0, &assignment);
    if (assignment.kind == MessageKind::kNoMoreTrials) break;
    ASSERT_EQ(assignment.kind, MessageKind::kTrial);
    EXPECT_EQ(std::get<double>(assignment.trial.params[0].value),
              static_cast<double>(assignment.trial.trial_id));
    mine.push_back(assignment.trial.trial_id);
    if (layout.rank_in_group == 0) {
      ControlMessage done;
      done.kind = MessageKind::kTrialResult;
      done.result.trial_id = assignment.trial.trial_id;
      done.result.status = TrialStatus::kCompleted;
      done.result.params = assignment.trial.params;
      done.result.curve = {{1, {1.0, 0.5, 0.5, 0.1}}};
      channel.Send(done);
    }
  }
  // Every rank of a group saw the same trials; the groups together saw each trial once.
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(4);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_EQ(counts[2], counts[3]);
  EXPECT_EQ(counts[0] + counts[2], 7);
  session.Join();
  if (world.rank() == 0) {
    ASSERT_EQ(study->rows.size(), 7u);
    EXPECT_EQ(study->published_rows, 7u);  // the last results are published before Join returns
    std::vector<int64_t> ids;
    for (const TrialResult& row : study->rows) ids.push_back(row.trial_id);
    std::sort(ids.begin(), ids.end());
    std::vector<int64_t> expected(7);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(ids, expected);
  }
}

}  // namespace
}  // namespace hpo
