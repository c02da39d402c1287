#include "config/option_rows.hpp"

// Options of the training workload: batch, ZeRO placement, capacity search. The first three
// (nodes, precision, optimizer_kind) also describe the model state a checkpoint writes.
namespace tiersim::config {

void training_option_rows(WorkloadOptionRows& rows) {
  const std::vector<std::string> tiers = {"gpu", "cpu", "nvme"};
  std::vector<Option>& t = rows.workload;
  t.push_back(only(required(integer("workload.global_batch", 1, "",
                                    "sequences per iteration over all data-parallel ranks",
                                    F(training.global_batch))),
                   kTraining));
  t.push_back(only(required(integer("workload.sequence_tokens", 1, "", "tokens per sequence",
                                    F(training.sequence_tokens))),
                   kTraining));
  t.push_back(only(integer("workload.nodes", 1, "1",
                           "nodes (data-parallel degree = gpu count * nodes / (tensor * pipeline))",
                           F(training.nodes)),
                   kTraining | kCheckpoint));
  t.push_back(only(choices(integer("workload.zero_stage", 0, "3", "ZeRO stage",
                                   F(training.zero_stage)),
                           {"0", "1", "2", "3"}),
                   kTraining));
  t.push_back(only(choice("workload.precision", {"mixed", "fp32"}, "mixed",
                          "mixed: fp16/bf16 params and grads with fp32 master weights; fp32: "
                          "everything fp32",
                          E(training.precision)),
                   kTraining | kCheckpoint));
  t.push_back(only(choice("workload.optimizer_kind", {"adam", "sgd_momentum"}, "adam",
                          "optimizer (sets the state bytes per parameter)",
                          E(training.optimizer_kind)),
                   kTraining | kCheckpoint));
  t.push_back(only(choice("workload.params", tiers, "gpu",
                          "where fp16 parameters live between uses", E(training.params)),
                   kTraining));
  t.push_back(only(choice("workload.gradients", tiers, "gpu", "where gradients live",
                          E(training.gradients)),
                   kTraining));
  t.push_back(only(choice("workload.optimizer", tiers, "gpu",
                          "where fp32 master weights and Adam moments live", E(training.optimizer)),
                   kTraining));
  t.push_back(only(flag("workload.activation_checkpointing", "true",
                        "recompute activations in the backward pass",
                        F(training.activation_checkpointing)),
                   kTraining));
  t.push_back(only(flag("workload.cpu_checkpointing", "false",
                        "move activation checkpoints to host memory (DeepSpeed "
                        "activation_checkpointing.cpu_checkpointing; ZeRO-Infinity)",
                        F(training.cpu_checkpointing)),
                   kTraining));
  t.push_back(only(integer("workload.linear_tiles", 1, "1",
                           "memory-centric tiling: tiles per Linear (DeepSpeed TiledLinear "
                           "in_splits x out_splits) that ZeRO-3 gathers one at a time",
                           F(training.linear_tiles)),
                   kTraining));
  t.push_back(only(choice("workload.zero3_host_grads", {"flat_fp16", "fp32_partition"}, "flat_fp16",
                          "ZeRO-3 with CPU Adam: DeepSpeed's host gradient buffers; flat_fp16: "
                          "today's (a flat fp16 partition and one fp32 sub-group), "
                          "fp32_partition: DeepSpeed 0.3.15-0.5's (fp32 over the partition, "
                          "none on the host when the optimizer is on NVMe)",
                          E(training.zero3_host_grads)),
                   kTraining));
  // DeepSpeed's zero_optimization buffer settings, where the run's config gives them: they size
  // the gradient reduce buckets on the GPU (model/training_memory.hpp ZeroBuffers). Written into
  // the resolved scenario only where they differ from DeepSpeed's defaults, so the scenarios
  // written before these keys keep their hashes.
  {
    Option o = only(number("workload.zero.reduce_bucket_size", "elements", 0, 1e15, true, "5e8",
                           "zero_optimization.reduce_bucket_size: gradient elements fused before "
                           "a reduction; the GPU holds a bucket of this size (two in stages 1-2 "
                           "with workload.zero.overlap_comm)",
                           F(training.reduce_bucket_elems)),
                    kTraining);
    o.emit_when = [](const Scenario& s) {
      return s.training.reduce_bucket_elems != TrainingWorkload{}.reduce_bucket_elems;
    };
    t.push_back(std::move(o));
  }
  {
    Option o = only(flag("workload.zero.overlap_comm", "false",
                         "zero_optimization.overlap_comm: stages 1-2 allocate a second gradient "
                         "reduce bucket, reducing one while the backward fills the other "
                         "(DeepSpeed's default for these stages: false)",
                         F(training.overlap_comm)),
                    kTraining);
    o.emit_when = [](const Scenario& s) {
      return s.training.overlap_comm != TrainingWorkload{}.overlap_comm;
    };
    t.push_back(std::move(o));
  }
  t.push_back(only(flag("workload.optimizer_on_cpu", "false",
                        "CPU Adam instead of GPU Adam (implied when the optimizer states are on "
                        "cpu or nvme)",
                        F(training.optimizer_on_cpu)),
                   kTraining));
  t.push_back(only(number("workload.cpu_adam_params_per_s", "params/s", 0, kInf, false, "0",
                          "CPU Adam rate of the whole host; 0 = estimate from its DRAM bandwidth",
                          F(training.cpu_adam_params_per_s)),
                   kTraining));
  t.push_back(only(flag("workload.params_auto", "false",
                        "find the largest model of this shape family that fits (max_params_b)",
                        F(training.params_auto)),
                   kTraining));
  t.push_back(only(choice("workload.capacity_shape", {"width_depth", "layers"}, "width_depth",
                          "params_auto: grow hidden and layers together (GPT-style) or layers "
                          "only",
                          E(training.capacity_shape)),
                   kTraining));
  t.push_back(only(integer("workload.checkpoint_interval_iters", 0, "0",
                           "iterations between checkpoints; 0 = none",
                           F(training.checkpoint_interval_iters)),
                   kTraining));
  t.push_back(only(number("workload.network_gbps", "GB/s", 0, kInf, true, "25",
                          "inter-node bandwidth per node and direction, all NICs together",
                          F(training.network_gbps)),
                   kTraining));

}

}  // namespace tiersim::config
