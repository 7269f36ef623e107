// Device operations HIP's own tests reach: float atomics of every address form gfx90a has (GLOBAL, FLAT on
// global and on LDS memory, DS, MUBUF; f64 add/min/max, f32 add, packed f16 add), packed 16-bit subtraction,
// bit-mask generation, the shared aperture from SH_MEM_BASES (generic pointers into LDS), LDS addresses that
// wrap around 32 bits, the clocks, generic pointers into private arrays, 16-bit min3/max3/med3, and
// __syncthreads_and/or/count in blocks that leave their last wave partly filled, and float atomics on
// fine-grained (coherent) host memory, which an MI200 drops.
// Instructions the compiler does not pick from C++ are written as inline assembly.
#include "check.h"
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <vector>

typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
typedef int rsrc_t __attribute__((ext_vector_type(4)));

// g: 12 doubles, f: 4 floats, h: 2 halves, out: per-lane results (4 per lane)
__global__ void float_atomics(double* g, float* f, half2_t* h, double* out) {
  __shared__ double sd[4];
  __shared__ float sf[2];
  const int t = threadIdx.x;
  if (t == 0) {
    sd[0] = 0; sd[1] = 0; sd[2] = 1e300; sd[3] = -1e300;
    sf[0] = 0; sf[1] = 0;
  }
  __syncthreads();
  const double v = t + 0.5, w = (t - 20) * 0.25;
  // GLOBAL
  __builtin_amdgcn_global_atomic_fadd_f64(g + 0, v);
  __builtin_amdgcn_global_atomic_fmax_f64(g + 1, w);
  __builtin_amdgcn_global_atomic_fmin_f64(g + 2, w);
  // FLAT on global memory, the returning form too
  out[4 * t + 0] = __builtin_amdgcn_flat_atomic_fadd_f64(g + 3, 1.0);
  __builtin_amdgcn_flat_atomic_fmax_f64(g + 4, w);
  __builtin_amdgcn_flat_atomic_fmin_f64(g + 5, w);
  __builtin_amdgcn_global_atomic_fadd_f32(f + 0, (float)t);
  __builtin_amdgcn_global_atomic_fadd_v2f16(h, half2_t{1, 2});
  // FLAT on LDS memory (a generic pointer to a __shared__ variable)
  out[4 * t + 1] = __builtin_amdgcn_flat_atomic_fadd_f64(sd + 0, 1.0);
  // DS
  unsigned lds = (unsigned)(uintptr_t)(__attribute__((address_space(3))) double*)(sd + 1);
  asm volatile("ds_add_f64 %0, %1\n\ts_waitcnt lgkmcnt(0)" : : "v"(lds), "v"(v) : "memory");
  lds = (unsigned)(uintptr_t)(__attribute__((address_space(3))) double*)(sd + 2);
  asm volatile("ds_min_f64 %0, %1\n\ts_waitcnt lgkmcnt(0)" : : "v"(lds), "v"(w) : "memory");
  lds = (unsigned)(uintptr_t)(__attribute__((address_space(3))) double*)(sd + 3);
  double old;
  asm volatile("ds_max_rtn_f64 %0, %1, %2\n\ts_waitcnt lgkmcnt(0)" : "=v"(old) : "v"(lds), "v"(w) : "memory");
  out[4 * t + 2] = old;
  unsigned lf = (unsigned)(uintptr_t)(__attribute__((address_space(3))) float*)(sf + 0);
  float oldf;
  asm volatile("ds_add_rtn_f32 %0, %1, %2\n\ts_waitcnt lgkmcnt(0)" : "=v"(oldf) : "v"(lf), "v"((float)t) : "memory");
  out[4 * t + 3] = oldf;
  __syncthreads();
  if (t == 0) {
    g[6] = sd[0]; g[7] = sd[1]; g[8] = sd[2]; g[9] = sd[3];
    f[1] = sf[0];
  }
}

// MUBUF float atomics on g[0..3] (f64 add, min, max) and f[0..1] (f32 add, packed f16 add) through buffer
// resources
__global__ void buffer_atomics(double* g, float* f) {
  const int t = threadIdx.x;
  const uint64_t gb = (uint64_t)g, fb = (uint64_t)f;
  // base, stride 0, 64 bytes, raw 32-bit data format
  rsrc_t rg = {(int)(uint32_t)gb, (int)(uint32_t)(gb >> 32) & 0xffff, 64, 0x00027000};
  rsrc_t rf = {(int)(uint32_t)fb, (int)(uint32_t)(fb >> 32) & 0xffff, 16, 0x00027000};
  const double v = t + 0.5, w = (t - 20) * 0.25;
  unsigned o0 = 0, o1 = 8, o2 = 16, f0 = 0, f1 = 4;
  asm volatile("buffer_atomic_add_f64 %0, %1, %2, 0 offen\n\ts_waitcnt vmcnt(0)" : : "v"(v), "v"(o0), "s"(rg) : "memory");
  asm volatile("buffer_atomic_min_f64 %0, %1, %2, 0 offen\n\ts_waitcnt vmcnt(0)" : : "v"(w), "v"(o1), "s"(rg) : "memory");
  asm volatile("buffer_atomic_max_f64 %0, %1, %2, 0 offen\n\ts_waitcnt vmcnt(0)" : : "v"(w), "v"(o2), "s"(rg) : "memory");
  asm volatile("buffer_atomic_add_f32 %0, %1, %2, 0 offen\n\ts_waitcnt vmcnt(0)" : : "v"((float)t), "v"(f0), "s"(rf) : "memory");
  half2_t one_two = {1, 2};
  asm volatile("buffer_atomic_pk_add_f16 %0, %1, %2, 0 offen\n\ts_waitcnt vmcnt(0)" : : "v"(one_two), "v"(f1), "s"(rf) : "memory");
}

// v_pk_sub_u16, v_pk_sub_i16, s_bfm_b32, s_bfm_b64, s_sext_i32_i8/i16, the shared aperture, generic pointers into LDS, clocks
__global__ void scalar_and_packed(const uint32_t* a, const uint32_t* b, uint32_t* pk, uint32_t n, uint32_t m,
                                  uint32_t* bfm, uint64_t* bfm64, int* shared_flags, uint64_t* clocks) {
  __shared__ int tile[64];
  const int t = threadIdx.x;
  uint32_t r;
  asm volatile("v_pk_sub_u16 %0, %1, %2" : "=v"(r) : "v"(a[t]), "v"(b[t]));
  pk[2 * t] = r;
  asm volatile("v_pk_sub_i16 %0, %1, %2" : "=v"(r) : "v"(a[t]), "v"(b[t]));
  pk[2 * t + 1] = r;
  if (t == 0) {
    uint32_t s;
    uint64_t s64;
    asm volatile("s_bfm_b32 %0, %1, %2" : "=s"(s) : "s"(n), "s"(m));
    bfm[0] = s;
    asm volatile("s_bfm_b64 %0, %1, %2" : "=s"(s64) : "s"(n + 20), "s"(m));
    bfm64[0] = s64;
    asm volatile("s_sext_i32_i16 %0, %1" : "=s"(s) : "s"(((n << 13) | 0x30080u)));
    bfm[6] = s;
    asm volatile("s_sext_i32_i8 %0, %1" : "=s"(s) : "s"(((n << 13) | 0x30080u)));
    bfm[7] = s;
    // the shared aperture as the hardware register holds it, and as the aperture register reads
    uint32_t bases;
    uint64_t aperture;
    asm volatile("s_getreg_b32 %0, hwreg(HW_REG_SH_MEM_BASES, 16, 16)" : "=s"(bases));
    asm volatile("s_mov_b64 %0, src_shared_base" : "=s"(aperture));
    bfm[1] = bases;
    bfm[2] = (uint32_t)(aperture >> 32);
    asm volatile("s_getreg_b32 %0, hwreg(HW_REG_SH_MEM_BASES, 0, 16)" : "=s"(bases));
    asm volatile("s_mov_b64 %0, src_private_base" : "=s"(aperture));
    bfm[3] = bases;
    bfm[4] = (uint32_t)(aperture >> 32);
  }
  // a generic pointer to LDS or global memory, chosen per lane
  tile[t] = 0;
  __syncthreads();
  int* p = (t & 1) ? &tile[t] : &shared_flags[64 + t];
  *p = 1000 + t;
  shared_flags[t] = __builtin_amdgcn_is_shared((const __attribute__((address_space(0))) void*)p) ? 1 : 0;
  __syncthreads();
  // the address register plus the offset wraps in 32 bits, as compilers expect when they fold an offset into
  // a DS instruction whose base may be negative
  const unsigned lds_tile = (unsigned)(uintptr_t)(__attribute__((address_space(3))) int*)tile;
  unsigned word, byte;
  asm volatile("ds_read_b32 %0, %1 offset:1024\n\ts_waitcnt lgkmcnt(0)" : "=v"(word) : "v"(lds_tile + 4 * t - 1024u));
  asm volatile("ds_read_u8 %0, %1 offset:1024\n\ts_waitcnt lgkmcnt(0)" : "=v"(byte) : "v"(lds_tile + 4 * t - 1024u));
  if (t == 0) bfm[5] = lds_tile;
  shared_flags[128 + t] = (int)word;
  shared_flags[192 + t] = (int)byte;
  if (t & 1) shared_flags[64 + t] = tile[t];
#ifdef __HIP_DEVICE_COMPILE__  // HIP 5.2 declares wall_clock64() for device code only
  if (t == 0) {
    long long c0 = clock64(), w0 = wall_clock64();
    long long acc = 0;
    for (uint32_t i = 0; i < 1000 + n; i++) acc += i * m;
    long long c1 = clock64(), w1 = wall_clock64();
    clocks[0] = c1 - c0;
    clocks[1] = w1 - w0;
    clocks[2] = acc;
  }
#endif
}

// a generic pointer into a private array (FLAT accesses through the private aperture)
__device__ __attribute__((noinline)) int sum_through(int* p, int n, int k) {
  for (int i = 0; i < n; i++) p[i] = p[i] * k + i;
  int s = 0;
  for (int i = 0; i < n; i++) s += p[(i * 7) % n];
  return s;
}

__global__ void private_flat(int* out, int k) {
  int local[40];
  for (int i = 0; i < 40; i++) local[i] = threadIdx.x + i;
  out[threadIdx.x] = sum_through(local, 40 - (threadIdx.x & 7), k);
}

// 16-bit three-operand minimum, maximum and median, signed and unsigned: 6 per lane
__global__ void three16(const uint32_t* a, uint32_t* out) {
  const int t = threadIdx.x;
  uint32_t x = a[t], y = a[(t + 17) % 64], z = a[(t + 40) % 64], r;
  asm volatile("v_min3_u16 %0, %1, %2, %3" : "=v"(r) : "v"(x), "v"(y), "v"(z)); out[6 * t + 0] = r & 0xffff;
  asm volatile("v_max3_u16 %0, %1, %2, %3" : "=v"(r) : "v"(x), "v"(y), "v"(z)); out[6 * t + 1] = r & 0xffff;
  asm volatile("v_med3_u16 %0, %1, %2, %3" : "=v"(r) : "v"(x), "v"(y), "v"(z)); out[6 * t + 2] = r & 0xffff;
  asm volatile("v_min3_i16 %0, %1, %2, %3" : "=v"(r) : "v"(x), "v"(y), "v"(z)); out[6 * t + 3] = r & 0xffff;
  asm volatile("v_max3_i16 %0, %1, %2, %3" : "=v"(r) : "v"(x), "v"(y), "v"(z)); out[6 * t + 4] = r & 0xffff;
  asm volatile("v_med3_i16 %0, %1, %2, %3" : "=v"(r) : "v"(x), "v"(y), "v"(z)); out[6 * t + 5] = r & 0xffff;
}

// results of __syncthreads_and/or/count per thread: 6 per thread
__global__ void block_votes(int* out) {
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int* o = out + 6 * i;
  o[0] = __syncthreads_and(1);
  o[1] = __syncthreads_and(t == 0 ? 0 : 1);
  o[2] = __syncthreads_and(-1);
  o[3] = __syncthreads_or(t == (int)blockDim.x - 1);
  o[4] = __syncthreads_or(0);
  o[5] = __syncthreads_count(t % 3 == 0);
}

template <typename T> static T med3(T p, T q, T s) { return std::max(std::min(p, q), std::min(std::max(p, q), s)); }

static uint32_t pk_sub(uint32_t a, uint32_t b) {
  uint32_t lo = (a - b) & 0xffff, hi = ((a >> 16) - (b >> 16)) & 0xffff;
  return hi << 16 | lo;
}

// Float and integer atomics on host memory; `old` gets each lane's returned value.
__global__ void host_atomics(double* d, float* f, int* i, double* old_d, float* old_f) {
  const int t = threadIdx.x;
  old_d[t] = __builtin_amdgcn_global_atomic_fadd_f64(d, 1.0);
  old_f[t] = __builtin_amdgcn_global_atomic_fadd_f32(f, 1.0f);
  atomicAdd(i, 1);
}

int main() {
  // ---- float atomics
  double* g; float* f; half2_t* h; double* out;
  CHECK(hipMalloc(&g, 12 * 8)); CHECK(hipMalloc(&f, 4 * 4)); CHECK(hipMalloc(&h, 4)); CHECK(hipMalloc(&out, 64 * 4 * 8));
  double g0[12] = {0, -1e300, 1e300, 0, -1e300, 1e300, 0, 0, 0, 0, 0, 0};
  float f0[4] = {0, 0, 0, 0};
  half2_t h0 = {0, 0};
  CHECK(hipMemcpy(g, g0, sizeof g0, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(f, f0, sizeof f0, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(h, &h0, 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(float_atomics, dim3(1), dim3(64), 0, 0, g, f, h, out);
  CHECK(hipGetLastError());
  double hg[12]; float hf[4]; half2_t hh; std::vector<double> ho(256);
  CHECK(hipMemcpy(hg, g, sizeof hg, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hf, f, sizeof hf, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hh, h, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(ho.data(), out, 256 * 8, hipMemcpyDeviceToHost));
  double sum_v = 0, min_w = 1e300, max_w = -1e300, sum_t = 0;
  for (int t = 0; t < 64; t++) {
    sum_v += t + 0.5; sum_t += t;
    min_w = std::min(min_w, (t - 20) * 0.25); max_w = std::max(max_w, (t - 20) * 0.25);
  }
  EXPECT(hg[0] == sum_v); EXPECT(hg[1] == max_w); EXPECT(hg[2] == min_w);
  EXPECT(hg[3] == 64.0); EXPECT(hg[4] == max_w); EXPECT(hg[5] == min_w);
  EXPECT(hg[6] == 64.0); EXPECT(hg[7] == sum_v); EXPECT(hg[8] == min_w); EXPECT(hg[9] == max_w);
  EXPECT(hf[0] == (float)sum_t); EXPECT(hf[1] == (float)sum_t);
  EXPECT((float)hh[0] == 64.0f && (float)hh[1] == 128.0f);
  // the returned old values: each of 0..63 exactly once for the +1 additions; the old maxima never exceed the
  // final one
  std::vector<int> seen_global(64), seen_lds(64);
  for (int t = 0; t < 64; t++) {
    double a = ho[4 * t], b = ho[4 * t + 1];
    EXPECT(a >= 0 && a < 64 && a == (int)a && b >= 0 && b < 64 && b == (int)b);
    seen_global[(int)a]++; seen_lds[(int)b]++;
    EXPECT(ho[4 * t + 2] == -1e300 || (ho[4 * t + 2] >= min_w && ho[4 * t + 2] <= max_w));
    EXPECT(ho[4 * t + 3] >= 0 && ho[4 * t + 3] <= (float)sum_t);
  }
  for (int t = 0; t < 64; t++) EXPECT(seen_global[t] == 1 && seen_lds[t] == 1);
  double b0[8] = {0, 1e300, -1e300, 0};
  float bf0[4] = {0, 0, 0, 0};
  CHECK(hipMemcpy(g, b0, sizeof b0, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(f, bf0, sizeof bf0, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(buffer_atomics, dim3(1), dim3(64), 0, 0, g, f);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(hg, g, 4 * 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hf, f, sizeof hf, hipMemcpyDeviceToHost));
  EXPECT(hg[0] == sum_v); EXPECT(hg[1] == min_w); EXPECT(hg[2] == max_w);
  EXPECT(hf[0] == (float)sum_t);
  half2_t bh; std::memcpy(&bh, &hf[1], 4);
  EXPECT((float)bh[0] == 64.0f && (float)bh[1] == 128.0f);
  std::printf("device ops: float atomics (global, flat on global and LDS, ds, buffer) correct\n");

  // ---- packed subtraction, bit masks, apertures, generic pointers, clocks
  std::vector<uint32_t> ha(64), hb(64);
  for (int t = 0; t < 64; t++) {
    ha[t] = (uint32_t)(t * 0x01234567u + 0x89abcdefu);
    hb[t] = (uint32_t)(t * 0x76543210u + 0x13579bdfu);
  }
  uint32_t *a, *b, *pk, *bfm; uint64_t *bfm64, *clocks; int* flags;
  CHECK(hipMalloc(&a, 256)); CHECK(hipMalloc(&b, 256)); CHECK(hipMalloc(&pk, 512)); CHECK(hipMalloc(&bfm, 32));
  CHECK(hipMalloc(&bfm64, 8)); CHECK(hipMalloc(&clocks, 24)); CHECK(hipMalloc(&flags, 256 * 4));
  CHECK(hipMemcpy(a, ha.data(), 256, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(b, hb.data(), 256, hipMemcpyHostToDevice));
  const uint32_t n = 7, m = 9;
  hipLaunchKernelGGL(scalar_and_packed, dim3(1), dim3(64), 0, 0, a, b, pk, n, m, bfm, bfm64, flags, clocks);
  CHECK(hipGetLastError());
  std::vector<uint32_t> hpk(128); uint32_t hbfm[8]; uint64_t hb64, hc[3]; std::vector<int> hfl(256);
  CHECK(hipMemcpy(hpk.data(), pk, 512, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hbfm, bfm, 32, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hb64, bfm64, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hc, clocks, 24, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hfl.data(), flags, 1024, hipMemcpyDeviceToHost));
  for (int t = 0; t < 64; t++) {
    // modular 16-bit differences are the same for unsigned and signed halves without clamping
    EXPECT(hpk[2 * t] == pk_sub(ha[t], hb[t]));
    EXPECT(hpk[2 * t + 1] == pk_sub(ha[t], hb[t]));
  }
  EXPECT(hbfm[0] == ((1u << n) - 1) << m);
  EXPECT(hb64 == ((1ull << (n + 20)) - 1) << m);
  EXPECT(hbfm[6] == (uint32_t)(int32_t)(int16_t)(((n << 13) | 0x30080u)) && (int32_t)hbfm[6] < 0);
  EXPECT(hbfm[7] == (uint32_t)(int32_t)(int8_t)(((n << 13) | 0x30080u)) && (int32_t)hbfm[7] < 0);
  // SH_MEM_BASES holds bits 63:48 of the shared (high half) and private (low half) apertures
  EXPECT(hbfm[1] << 16 == hbfm[2] && hbfm[2] != 0);
  EXPECT(hbfm[3] << 16 == hbfm[4] && hbfm[4] != 0 && hbfm[4] != hbfm[2]);
  EXPECT(hbfm[5] < 1024);  // so the address registers above wrapped
  for (int t = 0; t < 64; t++) {
    EXPECT(hfl[t] == (t & 1));
    EXPECT(hfl[64 + t] == 1000 + t);
    EXPECT(hfl[128 + t] == ((t & 1) ? 1000 + t : 0));
    EXPECT(hfl[192 + t] == (((t & 1) ? 1000 + t : 0) & 0xff));
  }
  long long acc = 0;
  for (uint32_t i = 0; i < 1000 + n; i++) acc += i * m;
  EXPECT((long long)hc[2] == acc);
  EXPECT(hc[0] > 1000);  // the shader clock counts at least one cycle per loop iteration
  std::printf("device ops: v_pk_sub, s_bfm, s_sext, SH_MEM_BASES apertures, generic LDS pointers, wrapped LDS addresses, clock64 %llu cycles correct\n", (unsigned long long)hc[0]);

  // ---- private arrays through generic pointers, 16-bit min3/max3/med3
  {
    int* o;
    CHECK(hipMalloc(&o, 64 * 4));
    hipLaunchKernelGGL(private_flat, dim3(1), dim3(64), 0, 0, o, 3);
    CHECK(hipGetLastError());
    int ho[64];
    CHECK(hipMemcpy(ho, o, sizeof ho, hipMemcpyDeviceToHost));
    for (int t = 0; t < 64; t++) {
      int local[40], n = 40 - (t & 7);
      for (int i = 0; i < 40; i++) local[i] = t + i;
      for (int i = 0; i < n; i++) local[i] = local[i] * 3 + i;
      int want = 0;
      for (int i = 0; i < n; i++) want += local[(i * 7) % n];
      EXPECT(ho[t] == want);
    }
    uint32_t* r;
    CHECK(hipMalloc(&r, 64 * 6 * 4));
    hipLaunchKernelGGL(three16, dim3(1), dim3(64), 0, 0, a, r);
    CHECK(hipGetLastError());
    std::vector<uint32_t> hr(64 * 6);
    CHECK(hipMemcpy(hr.data(), r, 64 * 6 * 4, hipMemcpyDeviceToHost));
    for (int t = 0; t < 64; t++) {
      uint16_t ux = ha[t], uy = ha[(t + 17) % 64], uz = ha[(t + 40) % 64];
      int16_t sx = ux, sy = uy, sz = uz;
      EXPECT(hr[6 * t + 0] == std::min({ux, uy, uz}));
      EXPECT(hr[6 * t + 1] == std::max({ux, uy, uz}));
      EXPECT(hr[6 * t + 2] == med3(ux, uy, uz));
      EXPECT(hr[6 * t + 3] == (uint16_t)std::min({sx, sy, sz}));
      EXPECT(hr[6 * t + 4] == (uint16_t)std::max({sx, sy, sz}));
      EXPECT(hr[6 * t + 5] == (uint16_t)med3(sx, sy, sz));
    }
    CHECK(hipFree(o));
    CHECK(hipFree(r));
  }
  std::printf("device ops: private arrays through generic pointers and 16-bit min3/max3/med3 correct\n");

  // ---- block-wide votes with partly filled waves
  for (int block : {10, 40, 64, 70, 130, 723}) {
    int* votes;
    const int total = 2 * block;
    CHECK(hipMalloc(&votes, total * 6 * 4));
    CHECK(hipMemset(votes, 0x55, total * 6 * 4));
    hipLaunchKernelGGL(block_votes, dim3(2), dim3(block), 0, 0, votes);
    CHECK(hipGetLastError());
    std::vector<int> hv(total * 6);
    CHECK(hipMemcpy(hv.data(), votes, total * 6 * 4, hipMemcpyDeviceToHost));
    const int thirds = (block + 2) / 3;
    for (int i = 0; i < total; i++) {
      const int* o = &hv[6 * i];
      if (!(o[0] == 1 && o[1] == 0 && o[2] == 1 && o[3] == 1 && o[4] == 0 && o[5] == thirds)) {
        std::fprintf(stderr, "block %d thread %d: and %d %d %d or %d %d count %d (want 1 0 1 1 0 %d)\n", block, i, o[0], o[1], o[2], o[3], o[4], o[5], thirds);
        return 1;
      }
    }
    CHECK(hipFree(votes));
  }
  std::printf("device ops: __syncthreads_and/or/count correct in blocks of 10 to 723 threads\n");

  // ---- float atomics on host memory. MI200 performs float atomics in its L2 only; fine-grained memory is not
  // cached for writes, so there they are NOPs that return 0 (ROCm's "Hardware atomics operation support").
  // Integer atomics reach host memory either way.
  for (int coherent = 0; coherent < 2; coherent++) {
    const unsigned flag = coherent ? hipHostMallocCoherent : hipHostMallocNonCoherent;
    double *d, *old_d; float *f, *old_f; int* i;
    CHECK(hipHostMalloc(&d, 8, flag)); CHECK(hipHostMalloc(&f, 4, flag)); CHECK(hipHostMalloc(&i, 4, flag));
    CHECK(hipMalloc(&old_d, 64 * 8)); CHECK(hipMalloc(&old_f, 64 * 4));
    *d = 5; *f = 7; *i = 0;
    hipLaunchKernelGGL(host_atomics, dim3(1), dim3(64), 0, 0, d, f, i, old_d, old_f);
    CHECK(hipDeviceSynchronize());
    std::vector<double> od(64); std::vector<float> of(64);
    CHECK(hipMemcpy(od.data(), old_d, 64 * 8, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(of.data(), old_f, 64 * 4, hipMemcpyDeviceToHost));
    EXPECT(*i == 64);
    if (coherent) {
      EXPECT(*d == 5 && *f == 7);
      for (int t = 0; t < 64; t++) EXPECT(od[t] == 0 && of[t] == 0);
    } else {
      EXPECT(*d == 69 && *f == 71);
      std::sort(od.begin(), od.end()); std::sort(of.begin(), of.end());
      for (int t = 0; t < 64; t++) EXPECT(od[t] == 5 + t && of[t] == 7 + t);
    }
    CHECK(hipHostFree(d)); CHECK(hipHostFree(f)); CHECK(hipHostFree(i)); CHECK(hipFree(old_d)); CHECK(hipFree(old_f));
  }
  std::printf("device ops: float atomics on coherent host memory dropped as on MI200, performed on non-coherent\n");
  return 0;
}
