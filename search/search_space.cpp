#include "search/search_space.hpp"

#include <algorithm>

#include "common/input_error.hpp"

namespace autotune::search {

using nccl::Collective;

std::vector<uint64_t> size_grid(uint64_t min_bytes, uint64_t max_bytes) {
  std::vector<uint64_t> sizes;
  for (uint64_t s = min_bytes; s <= max_bytes; s *= 2) {
    sizes.push_back(s);
    if (s > max_bytes / 2) break;  // the next doubling would overflow or pass max
  }
  if (sizes.empty() || sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

SearchSpace build_search_space(const SearchSpaceOptions& o) {
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes)
    throw InputError("<arguments>", 0,
                     "expected 0 < --min-bytes <= --max-bytes, found " + std::to_string(o.min_bytes) +
                         " and " + std::to_string(o.max_bytes));
  if (o.scales.empty()) throw InputError("<arguments>", 0, "expected at least one scale, found none");
  if (o.settings.empty()) throw InputError("<arguments>", 0, "expected at least one process-wide setting");
  for (size_t i = 0; i < o.settings.size(); ++i)
    for (size_t j = i + 1; j < o.settings.size(); ++j)
      if (o.settings[i].id == o.settings[j].id)
        throw InputError("<arguments>", 0, "process-wide setting '" + o.settings[i].id + "' is given twice");
  for (int ch : o.channels)
    if (ch < 1)
      throw InputError("<arguments>", 0, "expected channel counts >= 1, found " + std::to_string(ch));

  SearchSpace space;
  space.sizes = size_grid(o.min_bytes, o.max_bytes);
  space.scales = o.scales;
  std::sort(space.scales.begin(), space.scales.end());
  space.scales.erase(std::unique(space.scales.begin(), space.scales.end()), space.scales.end());
  // NCCL's defaults first: the baseline of every other setting, and the job a budget must not cut.
  space.settings = o.settings;
  std::stable_partition(space.settings.begin(), space.settings.end(),
                        [](const runners::ProcessSetting& s) { return s.is_default(); });
  std::vector<Collective> collectives = o.collectives;
  if (collectives.empty()) collectives.assign(nccl::kAllCollectives.begin(), nccl::kAllCollectives.end());
  std::vector<int> channels = o.channels.empty() ? std::vector<int>{0} : o.channels;
  for (Collective c : collectives) {
    if (std::any_of(space.collectives.begin(), space.collectives.end(),
                    [&](const CollectiveSpace& cs) { return cs.collective == c; }))
      continue;
    CollectiveSpace cs{c, {}};
    for (nccl::Algorithm a : nccl::kAllAlgorithms) {
      if (o.algorithms && !o.algorithms->count(a)) continue;
      for (nccl::Protocol p : nccl::kAllProtocols) {
        if (!nccl::is_allowed(c, a, p)) continue;
        for (int ch : channels) cs.candidates.push_back(runners::Candidate{a, p, ch});
      }
    }
    space.collectives.push_back(std::move(cs));
  }
  for (const auto& [scale, own] : o.scale_collectives)
    for (Collective c : own)
      if (std::find(collectives.begin(), collectives.end(), c) == collectives.end())
        throw InputError("<arguments>", 0,
                         "scale " + runners::shape_text(scale) +
                             ": expected collectives among those calibrated, found " +
                             std::string(nccl::name(c)));
  space.scale_collectives = o.scale_collectives;
  for (const auto& [scale, ops] : o.scale_point_to_point)
    for (auto op : ops)
      if (!nccl::is_point_to_point(op))
        throw InputError("<arguments>", 0,
                         "scale " + runners::shape_text(scale) +
                             ": expected point-to-point operations apart from the collectives, found " +
                             std::string(nccl::name(op)));
  space.scale_point_to_point = o.scale_point_to_point;
  return space;
}

std::vector<CollectiveSpace> SearchSpace::collectives_at(const runners::Scale& scale) const {
  auto own = scale_collectives.find(scale);
  if (own == scale_collectives.end()) return collectives;
  std::vector<CollectiveSpace> out;
  for (const auto& cs : collectives)
    if (std::find(own->second.begin(), own->second.end(), cs.collective) != own->second.end())
      out.push_back(cs);
  return out;
}

std::vector<nccl::Operation> SearchSpace::point_to_point_at(const runners::Scale& scale) const {
  auto own = scale_point_to_point.find(scale);
  return own == scale_point_to_point.end() ? std::vector<nccl::Operation>{} : own->second;
}

}  // namespace autotune::search
