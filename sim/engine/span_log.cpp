#include "sim/engine/span_log.hpp"

namespace tiersim::sim {

// The slot of this work on this resource: by the name pointer, by an equal name, or a new one.
std::uint32_t SpanLog::slot_of(int resource, Activity activity, Stage stage) {
  const auto r = static_cast<std::size_t>(resource);
  std::vector<Seen>& seen = resources_[r].seen;
  for (const Seen& s : seen)
    if (s.name == activity.name() && s.stage == stage) return s.slot;
  std::uint32_t slot = static_cast<std::uint32_t>(slots_.size());
  for (std::size_t k = 0; k < slots_.size(); ++k)
    if (slots_[k].resource == resource && slots_[k].stage == stage &&
        slots_[k].activity == activity) {
      slot = static_cast<std::uint32_t>(k);
      break;
    }
  if (slot == slots_.size()) slots_.push_back({resource, activity, stage, 0.0});
  seen.push_back(Seen{activity.name(), stage, slot});
  return slot;
}

std::uint32_t SpanLog::new_channel(int resource, int channel) {
  const auto r = static_cast<std::size_t>(resource);
  if (r >= resources_.size()) resources_.resize(r + 1);
  std::vector<std::uint32_t>& mine = resources_[r].channels;
  const auto c = static_cast<std::size_t>(channel);
  if (c >= mine.size()) mine.resize(c + 1, kNone);
  mine[c] = static_cast<std::uint32_t>(channels_.size());
  channels_.push_back({resource, channel, kNone});
  last_slot_.emplace_back();
  return mine[c];
}

std::size_t SpanLog::bytes() const {
  std::size_t per_resource = resources_.capacity() * sizeof(PerResource);
  for (const auto& r : resources_)
    per_resource +=
        r.seen.capacity() * sizeof(Seen) + r.channels.capacity() * sizeof(r.channels[0]);
  return chunks_.size() * kChunk * sizeof(Interval) + chunks_.capacity() * sizeof(chunks_[0]) +
         slots_.capacity() * sizeof(Slot) + channels_.capacity() * sizeof(Channel) +
         last_slot_.capacity() * sizeof(Seen) + per_resource;
}

}  // namespace tiersim::sim
