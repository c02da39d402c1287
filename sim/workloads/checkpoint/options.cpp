#include "config/option_rows.hpp"

// Options of the checkpoint workload: the writer, its buffers and the target. Training scenarios
// that checkpoint use the writer keys too (kinds training and checkpoint).
namespace tiersim::config {

void checkpoint_option_rows(WorkloadOptionRows& rows) {
  using VT = ValueType;
  std::vector<Option>& t = rows.workload;
  t.push_back(only(choice("workload.writer", {"torch_save", "fast_persist"}, "torch_save",
                          "checkpoint writer", E(checkpoint.writer)),
                   kTraining | kCheckpoint));
  t.push_back(only(choice("workload.weights_dtype", {"fp16", "bf16", "fp32"}, "fp16",
                          "checkpoint kind: precision of the saved model weights",
                          E(checkpoint.weights_dtype)),
                   kCheckpoint));
  t.push_back(only(range(opt("workload.size", VT::kSize, "bytes", "0",
                             "checkpoint size; 0 = from the model and optimizer states",
                             F(checkpoint.size_bytes)),
                         0, kInf),
                   kCheckpoint));
  // Each writer is a simulated process with its own resources. 4096 is above any real node's
  // writer count (one per GPU rank, at most one per hardware thread) and keeps memory bounded.
  t.push_back(only(range(integer("workload.writers_per_node", 1, "1",
                                 "processes writing the checkpoint per node (spread over the "
                                 "data-parallel ranks)",
                                 F(checkpoint.writers_per_node)),
                         1, 4096),
                   kTraining | kCheckpoint));
  t.push_back(only(flag("workload.include_optimizer", "true",
                        "checkpoint includes the optimizer states",
                        F(checkpoint.include_optimizer)),
                   kTraining | kCheckpoint));
  t.push_back(only(range(opt("workload.io_buffer", VT::kSize, "bytes", "256MiB",
                             "fast_persist: size of each of the two pinned write buffers",
                             F(checkpoint.io_buffer_bytes)),
                         0, kInf, true),
                   kTraining | kCheckpoint));
  t.push_back(only(choice("workload.serialization", {"zipfile", "legacy"}, "zipfile",
                          "torch.save file format: zipfile (the default since PyTorch 1.6; a "
                          "CRC-32 over every byte) or legacy (_use_new_zipfile_serialization="
                          "False); fast_persist always writes legacy",
                          E(checkpoint.serialization)),
                   kTraining | kCheckpoint));
  t.push_back(only(range(opt("workload.pickled_source", VT::kSize, "bytes", "0",
                             "Python source the pickler parses: when torch.save pickles whole "
                             "nn.Module objects (legacy format), the sum over distinct module "
                             "classes of the size of each class's defining file; 0 for a state "
                             "dict",
                             F(checkpoint.pickled_source_bytes)),
                         0, kInf),
                   kTraining | kCheckpoint));
  t.push_back(only(choice("workload.target.kind", {"local_nvme", "network"}, "local_nvme",
                          "checkpoint storage target", E(checkpoint.target.kind)),
                   kTraining | kCheckpoint));
  t.push_back(only(number("workload.target.per_node_gbps", "GB/s", 0, kInf, false, "0",
                          "network file system: what one node's client can push",
                          F(checkpoint.target.per_node_gbps)),
                   kTraining | kCheckpoint));
  t.push_back(only(number("workload.target.aggregate_gbps", "GB/s", 0, kInf, false, "0",
                          "network file system: what the servers absorb in total",
                          F(checkpoint.target.aggregate_gbps)),
                   kTraining | kCheckpoint));
  t.push_back(only(optional(opt("workload.target.name", VT::kText, "", "",
                                "storage target name (reports)", F(checkpoint.target.name))),
                   kTraining | kCheckpoint));

}

}  // namespace tiersim::config
