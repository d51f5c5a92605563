#include "runtime/sweep_session.hpp"

#include <utility>

#include "mpi/control_plane.hpp"

namespace hpo {

SweepSession::SweepSession(const Communicator& world, const GroupLayout& layout)
    : control_(world.Duplicate()),
      root_(world.rank() == 0),
      num_groups_(layout.num_groups),
      group_of_world_rank_(layout.group_of_world_rank) {}

SweepSession::~SweepSession() { Join(); }

void SweepSession::Coordinate(const SweepConfig& config, std::unique_ptr<StudyWriter> study,
                              CoordinatorDeps deps) {
  study_ = std::move(study);
  deps.study = study_.get();
  coordinator_ = std::make_unique<Coordinator>(config, num_groups_, std::move(deps));
  serving_ = true;
}

void SweepSession::Start(std::function<void()> poll) {
  if (!root_) return;
  server_ = std::thread([this, poll = std::move(poll)] {
    ServeCoordinator(*coordinator_, control_, group_of_world_rank_, poll);
    serving_ = false;
  });
}

void SweepSession::Join() {
  if (server_.joinable()) server_.join();
}

}  // namespace hpo
