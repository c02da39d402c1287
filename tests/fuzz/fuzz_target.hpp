#pragma once
// The fuzz target's entry point for the standalone driver: like LLVMFuzzerTestOneInput, but it
// returns how many readers accepted the input, which the driver uses as its only feedback (an
// accepted mutant joins the corpus, so that mutations reach past the first checks).
#include <cstddef>
#include <cstdint>

namespace tiersim::fuzz {
int run_input(const std::uint8_t* data, std::size_t size);
}
