#pragma once
// Element-wise reductions over NCCL's datatypes and ops (sum, prod, max, min, avg), computed on the host as
// the GPU would: float16 and bfloat16 through float, integers with wrap-around, avg as sum then divide.
// The FP8 types are not modelled (element_size() says 0). Pure functions.

#include <nccl.h>

#include <cstddef>

namespace autotune::standin {

// Bytes per element; 0 for a datatype the stand-in does not model.
size_t element_size(ncclDataType_t type);
bool valid_op(ncclRedOp_t op);

// out[i] = op over sources[0..n)[i], for `count` elements. `out` may be one of the sources.
void reduce(ncclDataType_t type, ncclRedOp_t op, const char* const* sources, int n, char* out, size_t count);

// "float32", "sum": NCCL's names for the logs and for disagreements.
const char* type_name(ncclDataType_t type);
const char* op_name(ncclRedOp_t op);

}  // namespace autotune::standin
