// rocSPARSE's own kernels (librocsparse, gfx90a code objects) on the emulated GPU: y = alpha A x + beta y for a
// sparse matrix in CSR form (rocsparse_scsrmv, with and without its analysis step), the CSR-to-COO conversion,
// and the triangular solve (rocsparse_scsrsv: its analysis kernel's waves wait on each other, across workgroups
// through global memory and within one through the LDS), against the CPU.
#include "check.h"
#include <algorithm>
#include <cmath>
#include <rocsparse/rocsparse.h>
#include <vector>

#define SPARSE(x)                                                                        \
  do {                                                                                   \
    rocsparse_status s_ = (x);                                                           \
    if (s_ != rocsparse_status_success) {                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(3);                                                                      \
    }                                                                                    \
  } while (0)

int main() {
  // a 1000 x 800 matrix: a band of three diagonals and every 7th column of every 13th row
  const int m = 1000, n = 800;
  std::vector<int> row_ptr(m + 1), col;
  std::vector<float> val;
  for (int i = 0; i < m; i++) {
    row_ptr[i] = (int)col.size();
    for (int j = 0; j < n; j++) {
      bool band = j >= i - 1 && j <= i + 1;
      bool extra = i % 13 == 0 && j % 7 == 0;
      if (band || extra) {
        col.push_back(j);
        val.push_back(0.25f * (float)((i * 31 + j * 17) % 23) - 2.0f);
      }
    }
  }
  row_ptr[m] = (int)col.size();
  const int nnz = (int)col.size();
  std::vector<float> x(n), y(m);
  for (int j = 0; j < n; j++) x[j] = std::sin(0.01f * (float)j);
  for (int i = 0; i < m; i++) y[i] = 0.5f * (float)(i % 9);
  const float alpha = 1.5f, beta = -0.75f;
  std::vector<double> want(m);
  for (int i = 0; i < m; i++) {
    double s = 0;
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) s += (double)val[k] * x[col[k]];
    want[i] = alpha * s + beta * y[i];
  }

  int *d_row, *d_col, *d_coo_row;
  float *d_val, *d_x, *d_y;
  CHECK(hipMalloc(&d_row, (m + 1) * sizeof(int)));
  CHECK(hipMalloc(&d_col, nnz * sizeof(int)));
  CHECK(hipMalloc(&d_coo_row, nnz * sizeof(int)));
  CHECK(hipMalloc(&d_val, nnz * sizeof(float)));
  CHECK(hipMalloc(&d_x, n * sizeof(float)));
  CHECK(hipMalloc(&d_y, m * sizeof(float)));
  CHECK(hipMemcpy(d_row, row_ptr.data(), (m + 1) * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_col, col.data(), nnz * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_val, val.data(), nnz * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_x, x.data(), n * sizeof(float), hipMemcpyHostToDevice));

  rocsparse_handle handle;
  SPARSE(rocsparse_create_handle(&handle));
  rocsparse_mat_descr descr;
  SPARSE(rocsparse_create_mat_descr(&descr));
  rocsparse_mat_info info;
  SPARSE(rocsparse_create_mat_info(&info));
  for (int analysed = 0; analysed < 2; analysed++) {
    if (analysed)
      SPARSE(rocsparse_scsrmv_analysis(handle, rocsparse_operation_none, m, n, nnz, descr, d_val, d_row, d_col, info));
    CHECK(hipMemcpy(d_y, y.data(), m * sizeof(float), hipMemcpyHostToDevice));
    SPARSE(rocsparse_scsrmv(handle, rocsparse_operation_none, m, n, nnz, &alpha, descr, d_val, d_row, d_col,
                            analysed ? info : nullptr, d_x, &beta, d_y));
    std::vector<float> got(m);
    CHECK(hipMemcpy(got.data(), d_y, m * sizeof(float), hipMemcpyDeviceToHost));
    double worst = 0;
    for (int i = 0; i < m; i++) worst = std::fmax(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
    EXPECT(worst < 1e-5);
    std::printf("rocsparse csrmv%s: %d rows, %d nonzeros, largest relative error %.1e\n",
                analysed ? " (analysed)" : "", m, nnz, worst);
  }
  SPARSE(rocsparse_csr2coo(handle, d_row, nnz, m, d_coo_row, rocsparse_index_base_zero));
  std::vector<int> coo(nnz);
  CHECK(hipMemcpy(coo.data(), d_coo_row, nnz * sizeof(int), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < m; i++)
    for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) wrong += coo[k] != i;
  EXPECT(wrong == 0);
  std::printf("rocsparse csr2coo: %d row indices, %d wrong\n", nnz, wrong);
  SPARSE(rocsparse_destroy_mat_info(info));
  SPARSE(rocsparse_destroy_mat_descr(descr));

  // L y = x for a lower triangle with pseudo-random columns; in the second matrix every 50th row from row 49
  // has no diagonal entry, which the analysis reports as the first structural zero pivot
  for (int holes = 0; holes < 2; holes++) {
    const int rows = holes ? 187 : 1000;
    std::vector<int> ptr(rows + 1), ind;
    std::vector<float> v;
    unsigned seed = 12345;
    auto next = [&]() { return seed = seed * 1103515245u + 12345u, (seed >> 8) % (unsigned)rows; };
    for (int i = 0; i < rows; i++) {
      ptr[i] = (int)ind.size();
      std::vector<int> cols;
      for (int k = 0; k < 8; k++) cols.push_back((int)(next() % (unsigned)(i + 1)));
      if (!(holes && i % 50 == 49)) cols.push_back(i);
      std::sort(cols.begin(), cols.end());
      cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
      if (holes && i % 50 == 49) cols.erase(std::remove(cols.begin(), cols.end(), i), cols.end());
      for (int c : cols) {
        ind.push_back(c);
        v.push_back(c == i ? 4.0f : 0.125f * (float)((i + 3 * c) % 9) - 0.5f);
      }
    }
    ptr[rows] = (int)ind.size();
    const int nz = (int)ind.size();
    int *d_ptr, *d_ind;
    float *d_v, *d_b, *d_sol;
    CHECK(hipMalloc(&d_ptr, (rows + 1) * sizeof(int)));
    CHECK(hipMalloc(&d_ind, nz * sizeof(int)));
    CHECK(hipMalloc(&d_v, nz * sizeof(float)));
    CHECK(hipMalloc(&d_b, rows * sizeof(float)));
    CHECK(hipMalloc(&d_sol, rows * sizeof(float)));
    CHECK(hipMemcpy(d_ptr, ptr.data(), (rows + 1) * sizeof(int), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_ind, ind.data(), nz * sizeof(int), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_v, v.data(), nz * sizeof(float), hipMemcpyHostToDevice));
    std::vector<float> b(rows);
    for (int i = 0; i < rows; i++) b[i] = std::cos(0.1f * (float)i);
    CHECK(hipMemcpy(d_b, b.data(), rows * sizeof(float), hipMemcpyHostToDevice));
    rocsparse_mat_descr lower;
    SPARSE(rocsparse_create_mat_descr(&lower));
    SPARSE(rocsparse_set_mat_fill_mode(lower, rocsparse_fill_mode_lower));
    rocsparse_mat_info tri;
    SPARSE(rocsparse_create_mat_info(&tri));
    size_t bytes = 0;
    SPARSE(rocsparse_scsrsv_buffer_size(handle, rocsparse_operation_none, rows, nz, lower, d_v, d_ptr, d_ind, tri,
                                        &bytes));
    void* buffer;
    CHECK(hipMalloc(&buffer, bytes));
    SPARSE(rocsparse_scsrsv_analysis(handle, rocsparse_operation_none, rows, nz, lower, d_v, d_ptr, d_ind, tri,
                                     rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buffer));
    rocsparse_int pivot = -1;
    rocsparse_status zero = rocsparse_csrsv_zero_pivot(handle, lower, tri, &pivot);
    if (holes) {
      EXPECT(zero == rocsparse_status_zero_pivot && pivot == 49);
      std::printf("rocsparse csrsv: %d rows, a structural zero pivot at row %d\n", rows, (int)pivot);
    } else {
      EXPECT(zero == rocsparse_status_success && pivot == -1);
      const float one = 1.0f;
      SPARSE(rocsparse_scsrsv_solve(handle, rocsparse_operation_none, rows, nz, &one, lower, d_v, d_ptr, d_ind, tri,
                                    d_b, d_sol, rocsparse_solve_policy_auto, buffer));
      std::vector<float> got(rows);
      CHECK(hipMemcpy(got.data(), d_sol, rows * sizeof(float), hipMemcpyDeviceToHost));
      std::vector<double> ref(rows);
      double worst = 0;
      for (int i = 0; i < rows; i++) {
        double t = b[i], d = 1;
        for (int k = ptr[i]; k < ptr[i + 1]; k++) {
          if (ind[k] < i) t -= (double)v[k] * ref[ind[k]];
          else d = v[k];
        }
        ref[i] = t / d;
        worst = std::fmax(worst, std::fabs(got[i] - ref[i]) / (1.0 + std::fabs(ref[i])));
      }
      EXPECT(worst < 1e-5);
      std::printf("rocsparse csrsv: %d rows solved, %d nonzeros, largest relative error %.1e\n", rows, nz, worst);
    }
    SPARSE(rocsparse_destroy_mat_info(tri));
    SPARSE(rocsparse_destroy_mat_descr(lower));
    CHECK(hipFree(buffer));
  }
  SPARSE(rocsparse_destroy_handle(handle));
  return 0;
}
