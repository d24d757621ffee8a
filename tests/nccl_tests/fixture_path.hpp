#pragma once
// Where the recorded nccl-tests outputs these tests read are kept.

#include <string>

namespace autotune::nccl_tests::test {

inline std::string fixture(const std::string& name) {
  return std::string(AUTOTUNE_SOURCE_DIR) + "/tests/nccl_tests/fixtures/" + name;
}

}  // namespace autotune::nccl_tests::test
