#include "topology/nvlink.hpp"

namespace autotune::topology {

double nvlink_link_gbps(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86 || sm == 87 || sm == 89) return 12.0;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return 0.0;
}

}  // namespace autotune::topology
