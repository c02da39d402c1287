#include "config/option_rows.hpp"

// Options of the io workload: one stream of transfers.
namespace tiersim::config {

void io_option_rows(WorkloadOptionRows& rows) {
  using VT = ValueType;
  std::vector<Option>& t = rows.workload;
  t.push_back(only(choice("workload.direction", {"read", "write"}, "read", "transfer direction",
                          [](Scenario& s) -> FieldRef {
                            bool* w = &s.io.write;
                            return EnumRef{[w](int i) { *w = i == 1; }, [w] { return *w ? 1 : 0; }};
                          }),
                   kIo));
  t.push_back(only(required(range(opt("workload.size", VT::kSize, "bytes", "",
                                      "bytes per transfer", F(io.bytes)),
                                  0, kInf, true)),
                   kIo));
  t.push_back(only(choice("workload.buffer", {"cpu", "gpu_bounce", "gpu_direct"}, "cpu",
                          "where the data lands: pinned host memory, GPU via a host bounce "
                          "buffer, or GPU directly (GDS)",
                          E(io.buffer)),
                   kIo));

}

}  // namespace tiersim::config
