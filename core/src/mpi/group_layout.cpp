#include "hpo/mpi/group_layout.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace hpo {

Status ComputeGroupLayout(const Communicator& world, int ranks_per_trial, GroupLayout* layout) {
  const int world_size = world.size();
  const int world_rank = world.rank();
  if (ranks_per_trial < 1 || world_size % ranks_per_trial != 0) {
    const int lower = world_size / ranks_per_trial * ranks_per_trial;
    return Status::BadInput("ranks_per_trial is " + std::to_string(ranks_per_trial) +
                            " but the job has " + std::to_string(world_size) +
                            " ranks, which do not divide into groups of " +
                            std::to_string(ranks_per_trial) + "; start " +
                            (lower > 0 ? std::to_string(lower) + " or " : std::string()) +
                            std::to_string(lower + ranks_per_trial) + " ranks");
  }

  Communicator node = world.SplitShared();
  layout->node_local_rank = node.rank();
  layout->ranks_on_node = node.size();

  // Node leaders number the nodes in world-rank order; each leader tells its node.
  Communicator leaders = world.Split(layout->node_local_rank == 0 ? 0 : MPI_UNDEFINED, world_rank);
  int node_index = leaders.valid() ? leaders.rank() : 0;
  HPO_MPI_CHECK(MPI_Bcast(&node_index, 1, MPI_INT, 0, node.get()));
  layout->node_index = node_index;

  std::array<int, 2> mine = {node_index, layout->node_local_rank};
  std::vector<int> all(2 * static_cast<size_t>(world_size));
  HPO_MPI_CHECK(MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, world.get()));

  std::vector<int> order(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&all](int a, int b) {
    return std::make_pair(all[2 * a], all[2 * a + 1]) < std::make_pair(all[2 * b], all[2 * b + 1]);
  });

  layout->num_groups = world_size / ranks_per_trial;
  layout->group_of_world_rank.assign(static_cast<size_t>(world_size), 0);
  int my_position = 0;
  for (int position = 0; position < world_size; ++position) {
    layout->group_of_world_rank[order[position]] = position / ranks_per_trial;
    if (order[position] == world_rank) my_position = position;
  }
  layout->group = my_position / ranks_per_trial;
  layout->group_comm = world.Split(layout->group, my_position);
  layout->rank_in_group = layout->group_comm.rank();
  return Status::Ok();
}

}  // namespace hpo
