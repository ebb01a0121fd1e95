// ProcessSets: registration of a runtime's process sets (see process_sets.h).
#include "core/process_sets.h"

#include <mutex>

namespace hvd {

ProcessSets::ProcessSets(Platform& p, const Config& config, const Logger& log, Device* cpu,
                         Device* gpu, Mutex& queue_mu)
    : p_(p), config_(config), log_(log), cpu_(cpu), gpu_(gpu), mu_(queue_mu) {}

Status ProcessSets::init(ProcessSet& ps) {
  ps.controller = std::make_unique<Controller>(*ps.t, p_, config_, log_, cpu_);
  {  // a set created mid-run follows the autotuner's cache switch
    std::unique_lock<Mutex> lk(mu_);
    if (cache_switch_) ps.controller->set_cache_enabled(*cache_switch_);
  }
  for (int k = 0; k < 2; ++k) {
    Device* d = k == 0 ? cpu_ : gpu_;
    ps.fusion[k] = DeviceBuffer(d, 0);
    ps.scratch[k] = DeviceBuffer(d, 0);
  }
  // Every member evaluates the same global facts, so all or none make the (collective) split.
  if (ps.t->homogeneous() && ps.t->local_size() > 1 && ps.t->cross_size() > 1) {
    ps.local = ps.t->split(ps.t->node_of(ps.t->rank()), ps.t->rank());
    ps.cross = ps.t->split(ps.t->local_rank(), ps.t->rank());
  }
  return Status::OK();
}

Status ProcessSets::add_world(Transport& t) {
  auto world = std::make_unique<ProcessSet>();
  world->t = &t;
  sizes_.push_back(t.size());
  HVD_RETURN_IF_ERROR(init(*world));
  sets_[0] = std::move(world);
  return Status::OK();
}

StatusOr<int> ProcessSets::add(const std::vector<int32_t>& ranks, std::unique_ptr<Transport> sub) {
  const int id = static_cast<int>(sizes_.size());
  {
    std::unique_lock<Mutex> lk(mu_);
    sizes_.push_back(static_cast<int>(ranks.size()));
  }
  if (sub) {
    auto ps = std::make_unique<ProcessSet>();
    ps->id = id;
    ps->owned = std::move(sub);
    ps->t = ps->owned.get();
    HVD_RETURN_IF_ERROR(init(*ps));
    std::unique_lock<Mutex> lk(mu_);
    sets_[id] = std::move(ps);
  }
  return id;
}

// Every rank marks the set removed in the same cycle, before the caller's handle completes:
// from then on enqueue refuses it. Members keep the set alive until the cycle's end (the
// cycle still walks it), then drop it (RuntimeImpl::drop_removed_sets).
void ProcessSets::remove(int id) {
  std::unique_lock<Mutex> lk(mu_);
  if (id >= 0 && static_cast<size_t>(id) < sizes_.size()) sizes_[static_cast<size_t>(id)] = 0;
  auto it = sets_.find(id);
  if (it != sets_.end()) {
    removed_.push_back(std::move(it->second));
    sets_.erase(it);
  }
}

std::vector<std::unique_ptr<ProcessSet>> ProcessSets::take_removed_locked() {
  std::vector<std::unique_ptr<ProcessSet>> gone;
  gone.swap(removed_);
  return gone;
}

void ProcessSets::follow_cache_switch(std::optional<bool> on) {
  std::unique_lock<Mutex> lk(mu_);
  cache_switch_ = on;
}

void ProcessSets::set_cache_enabled(bool on) {
  for (auto& [id, ps] : sets_) ps->controller->set_cache_enabled(on);
  follow_cache_switch(on);
}

int ProcessSets::size_of(int id) const {
  return id >= 0 && static_cast<size_t>(id) < sizes_.size() ? sizes_[static_cast<size_t>(id)] : -1;
}

ProcessSet* ProcessSets::find_locked(int id) {
  auto it = sets_.find(id);
  return it == sets_.end() ? nullptr : it->second.get();
}

}  // namespace hvd
