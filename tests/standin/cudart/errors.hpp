#pragma once
// CUDA's error names and strings for the codes the stand-in returns (the text CUDA 13's runtime gives), and
// the per-thread last error that cudaGetLastError / cudaPeekAtLastError report. Thread-safe.

#include <cuda_runtime_api.h>

namespace autotune::standin {

const char* error_name(cudaError_t e);
const char* error_string(cudaError_t e);

// Every entry point returns through this: a failure (other than "not ready", which CUDA does not count as an
// error) becomes the calling thread's last error.
cudaError_t returned(cudaError_t e);
cudaError_t take_last_error();
cudaError_t peek_last_error();

}  // namespace autotune::standin
