#pragma once
// The fuzz target's entry point for the standalone driver: like LLVMFuzzerTestOneInput, but it
// returns how many readers accepted the input, which the driver uses as its only feedback (an
// accepted mutant joins the corpus, so that mutations reach past the first checks).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "model/errors.hpp"

namespace tiersim::fuzz {
int run_input(const std::uint8_t* data, std::size_t size);

// A finding: printed with the reader that made it, then abort(), which both drivers report with
// the input.
[[noreturn]] inline void finding(const char* reader, const std::string& what) {
  std::fprintf(stderr, "tiersim fuzz: %s: %s\n", reader, what.c_str());
  std::abort();
}

// Runs `f`; true when it accepted the input, false when it rejected it with a tiersim::Error.
// Any other exception is what `tiersim` would print as an internal error: a finding.
template <class F>
bool accepts(const char* reader, F&& f) {
  try {
    f();
    return true;
  } catch (const tiersim::Error&) {
    return false;
  } catch (const std::exception& e) {
    finding(reader, std::string("internal error (not a tiersim::Error): ") + e.what());
  } catch (...) {
    finding(reader, "internal error (not a tiersim::Error): an exception not derived from "
                    "std::exception");
  }
}
}  // namespace tiersim::fuzz
