#include "sim/engine/span_log.hpp"

#include <utility>

namespace tiersim::sim {

std::uint32_t SpanLog::slot_of(int resource, Activity activity, Stage stage) {
  const auto r = static_cast<std::size_t>(resource);
  if (r >= seen_.size()) seen_.resize(r + 1);
  std::vector<Seen>& mine = seen_[r];
  for (std::size_t j = 0; j < mine.size(); ++j) {
    if (mine[j].name != activity.name() || mine[j].stage != stage) continue;
    if (j > 0) std::swap(mine[j], mine[0]);
    return mine[0].slot;
  }
  // First seen with this name pointer: the slot of an equal name, or a new one.
  std::uint32_t slot = static_cast<std::uint32_t>(slots_.size());
  for (std::size_t k = 0; k < slots_.size(); ++k)
    if (slots_[k].resource == resource && slots_[k].stage == stage &&
        slots_[k].activity == activity) {
      slot = static_cast<std::uint32_t>(k);
      break;
    }
  if (slot == slots_.size()) slots_.push_back({resource, activity, stage, 0.0});
  mine.insert(mine.begin(), Seen{activity.name(), stage, slot});
  return slot;
}

void SpanLog::add(int resource, int channel, double start_s, double end_s, double work_s,
                  Activity activity, Stage stage) {
  const std::uint32_t slot = slot_of(resource, activity, stage);
  slots_[slot].busy_s += work_s;
  if (end_s <= start_s) return;
  if ((size_ & kMask) == 0 && (size_ >> kChunkBits) == chunks_.size())
    chunks_.push_back(std::make_unique_for_overwrite<Interval[]>(kChunk));
  chunks_[size_ >> kChunkBits][size_ & kMask] =
      Interval{start_s, end_s, work_s, slot, static_cast<std::uint32_t>(channel)};
  ++size_;
}

std::size_t SpanLog::bytes() const {
  std::size_t seen = 0;
  for (const auto& s : seen_) seen += s.capacity() * sizeof(Seen);
  return chunks_.size() * kChunk * sizeof(Interval) + chunks_.capacity() * sizeof(chunks_[0]) +
         slots_.capacity() * sizeof(Slot) + seen;
}

}  // namespace tiersim::sim
