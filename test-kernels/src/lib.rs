//! Bundled test kernels: sources (OpenCL C, HIP, assembly) under `src/kernels/`, their prebuilt code objects
//! under `prebuilt/`, and (from issue 3 on) CPU references. `build.sh` rebuilds the code objects with clang-19.
