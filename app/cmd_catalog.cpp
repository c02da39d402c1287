// `tiersim catalog [gpus|drives|hosts|models|prices] [--json]`: what the catalogs define.
#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "app/command.hpp"
#include "config/catalog.hpp"
#include "config/catalog_json.hpp"
#include "config/spec_fields.hpp"
#include "model/attention_kernel.hpp"
#include "model/errors.hpp"

namespace tiersim::app {

namespace {

using config::Catalog;
using config::format_number;
using Row = std::vector<std::string>;

// Left-aligned columns, two spaces apart.
void print_table(std::ostream& os, const std::string& title, const Row& header,
                 const std::vector<Row>& rows) {
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const Row& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i)
      s += r[i] + (i + 1 < r.size() ? std::string(width[i] - r[i].size() + 2, ' ') : "");
    os << s << "\n";
  };
  os << title << ":\n";
  line(header);
  for (const auto& r : rows) line(r);
  os << "\n";
}

std::string num(double v) { return format_number(v); }
std::string price(const PriceQuote& q) { return q.known() ? num(q.usd) : "-"; }

// Where a fused stack's prefill attention rates on `g` come from (model/attention_kernel.hpp):
// measured on this board, inherited from the generation's measured board (its name), or "-" where
// no published table covers the generation (the stack's GEMM rate).
std::string attention_from(const GpuSpec& g) {
  const std::string board =
      fused_attention_measured_on(FusedAttentionKernel::kFlashAttention, g.arch);
  if (board.empty()) return "-";
  return board == g.name ? "measured" : board;
}

void print_gpus(std::ostream& os, const Catalog& c) {
  std::vector<Row> rows;
  for (const auto& g : c.gpus())
    rows.push_back({g.name, num(g.memory_mib), g.memory_label, g.arch, num(g.hbm_gbps),
                    num(g.fp16_tflops),
                    "Gen" + std::to_string(g.pcie_gen) + " x" + std::to_string(g.pcie_lanes),
                    num(g.pcie_h2d_gbps), num(g.nvlink_gbps), num(g.tdp_w), g.gds ? "yes" : "no",
                    // Where the achieved rates come from: a measurement on this GPU, a measured
                    // sibling's (rates_from), or none (datasheet peak x the stack's efficiency).
                    !g.rates_from.empty() ? g.rates_from
                    : g.fp16_achieved_tflops >= 0 || g.fp16_decode_achieved_tflops >= 0 ||
                            g.l2_shared_read_gbps >= 0
                        ? std::string("measured")
                        : std::string("none"),
                    attention_from(g), price(c.gpu_price(g.name))});
  print_table(os, "GPUs",
              {"name", "memory_mib", "label", "arch", "hbm_gbps", "fp16_tflops", "pcie", "h2d_gbps",
               "nvlink_gbps", "tdp_w", "gds", "rates_from", "attention_from", "usd"},
              rows);
}

void print_drives(std::ostream& os, const Catalog& c) {
  std::vector<Row> rows;
  for (const auto& d : c.drives())
    rows.push_back({d.name, "Gen" + std::to_string(d.pcie_gen) + " x" + std::to_string(d.pcie_lanes),
                    num(d.capacity_tb), num(d.read_gbps), num(d.write_gbps),
                    num(d.rand_read_kiops), num(d.read_latency_us), num(d.active_w),
                    price(c.drive_price(d.name))});
  print_table(os, "NVMe drives",
              {"name", "pcie", "capacity_tb", "read_gbps", "write_gbps", "rand_read_kiops",
               "read_latency_us", "active_w", "usd"},
              rows);
}

void print_hosts(std::ostream& os, const Catalog& c) {
  std::vector<Row> rows;
  for (const auto& h : c.hosts())
    rows.push_back({h.name, std::to_string(h.sockets) + "x" + std::to_string(h.cores_per_socket),
                    num(h.dram_gb), num(h.dram_gbps), "Gen" + std::to_string(h.pcie_gen),
                    h.virtual_machine ? "VM" : "bare metal", num(h.cpu_fp16_gflops),
                    num(h.platform_w), price(c.platform_price(h.name))});
  print_table(os, "hosts",
              {"name", "sockets x cores", "dram_gb", "dram_gbps", "pcie", "runs as",
               "cpu_fp16_gflops", "platform_w", "platform_usd"},
              rows);
}

void print_models(std::ostream& os, const Catalog& c) {
  std::vector<Row> rows;
  for (const auto& m : c.models())
    rows.push_back(
        {m.name, m.family, std::to_string(m.layers), std::to_string(m.hidden),
         std::to_string(m.ffn), std::to_string(m.heads), std::to_string(m.head_dim()),
         // MLA's compressed entry: latent + rotary key per token and layer (DeepSeek-V3's 576).
         std::to_string(m.kv_heads) +
             (m.mla() ? " (MLA latent " + std::to_string(m.latent_kv_dim()) + ")" : "") +
             // Sliding-window attention and the layers it runs on (gpt-oss: 128 tokens on 18).
             (m.sliding_layers() > 0 ? " (window " + std::to_string(m.sliding_window) + " on " +
                                           std::to_string(m.sliding_layers()) + " layers)"
                                     : ""),
         std::to_string(m.vocab),
         std::to_string(m.experts) +
             (m.experts > 1 ? " (top-" + std::to_string(m.experts_per_token) + ")" : "") +
             (m.shared_ffn > 0 ? " + shared " + std::to_string(m.shared_ffn) : "") +
             // An MoE some of whose layers run a dense MLP instead (GLM-4.5's first three).
             (m.mixed_layers()
                  ? "; " + std::to_string(m.layers - m.expert_layers()) + " dense layer" +
                        (m.layers - m.expert_layers() == 1 ? "" : "s") + " of " +
                        std::to_string(m.dense_mlp_width())
                  : ""),
         m.ffn_kind == FfnKind::kGated ? "gated" : "mlp", num(m.published_params_b),
         m.hf_config.empty() ? "catalog" : m.hf_config});
  print_table(os, "models",
              {"name", "family", "layers", "hidden", "ffn", "heads", "head_dim", "kv_heads",
               "vocab", "experts", "ffn_kind", "params_b", "from"},
              rows);
}

void print_prices(std::ostream& os, const Catalog& c) {
  std::vector<Row> rows;
  auto add = [&](const std::string& kind, const std::vector<config::PriceEntry>& v) {
    for (const auto& e : v) rows.push_back({kind, e.name, num(e.quote.usd), e.quote.date});
  };
  add("gpu", c.gpu_prices());
  add("platform", c.platform_prices());
  add("drive", c.drive_prices());
  const PriceQuote dram = c.dram_price_per_gb();
  rows.push_back({"dram", "per GB", price(dram), dram.date});
  print_table(os, "prices (USD)", {"kind", "name", "usd", "date"}, rows);
}

}  // namespace

int cmd_catalog(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description desc(
      "usage: tiersim catalog [gpus|drives|hosts|models|prices] [--json]\n\n"
      "Lists what a scenario may name, with the figures the simulator uses: GPUs (memory as\n"
      "nvidia-smi reports it, bandwidths, dense rates, where the achieved rates come from),\n"
      "NVMe drives, hosts (sockets, DRAM, PCIe, power, bare metal or a virtual machine),\n"
      "models (shape, parameters, the config.json they come from) and prices. Every number\n"
      "carries its source in scenarios/catalog/*.yaml; --json prints them. A scenario may also\n"
      "give a GPU's or drive's fields itself, or a model as a Hugging Face config.json\n"
      "(model: {hf_config: path}).\n\noptions");
  std::string data_dir;
  desc.add_options()("help,h", "show this help")("json", "print every field and source as JSON")(
      "data-dir", po::value(&data_dir),
      kDataDirHelp);
  po::options_description hidden;
  std::string which = "all";
  hidden.add_options()("which", po::value(&which));
  const po::variables_map vm = parse_command_line(args, desc, hidden, "which", 1);
  if (vm.count("help")) {
    std::cout << desc << "\nexamples:\n  tiersim catalog gpus\n  tiersim catalog models --json\n";
    return kExitOk;
  }
  config::check_catalog_kind(which);
  const Catalog c = Catalog::load(data_dir);
  const bool every = which == "all";
  if (vm.count("json")) {
    std::cout << config::catalog_json(c, which).dump(2) << "\n";
    return kExitOk;
  }
  if (every || which == "gpus") print_gpus(std::cout, c);
  if (every || which == "drives") print_drives(std::cout, c);
  if (every || which == "hosts") print_hosts(std::cout, c);
  if (every || which == "models") print_models(std::cout, c);
  if (every || which == "prices") print_prices(std::cout, c);
  return kExitOk;
}

}  // namespace tiersim::app
