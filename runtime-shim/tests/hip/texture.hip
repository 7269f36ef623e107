// Images through HIP: arrays, pitched memory and 3-D arrays as textures, sampled with nearest and linear
// filtering, normalized and unnormalized coordinates and every addressing mode, each compared with a CPU
// reference of the texture-sampling rules; array copies both ways through the runtime's image blit kernels.
#include "check.h"
#include <cmath>
#include <vector>

constexpr int W = 37, H = 23;

static float value(int x, int y) { return float((x * 7 + y * 13) % 29) - 3.5f * y; }

// CPU reference: the texel index of a coordinate under an addressing mode.
static int address(int i, int n, hipTextureAddressMode m, bool* border) {
  *border = false;
  switch (m) {
    case hipAddressModeWrap: return ((i % n) + n) % n;
    case hipAddressModeMirror: {
      int p = ((i % (2 * n)) + 2 * n) % (2 * n);
      return p >= n ? 2 * n - 1 - p : p;
    }
    case hipAddressModeBorder:
      if (i < 0 || i >= n) *border = true;
      return *border ? 0 : i;
    default: return i < 0 ? 0 : (i >= n ? n - 1 : i);
  }
}

static float texel(const std::vector<float>& img, int x, int y, hipTextureAddressMode m) {
  bool bx, by;
  int ix = address(x, W, m, &bx), iy = address(y, H, m, &by);
  return (bx || by) ? 0.0f : img[iy * W + ix];
}

// CPU reference of tex2D at texel-space position (u, v). The texture unit holds positions with 8 fractional
// bits, so filter weights are multiples of 1/256.
static float reference(const std::vector<float>& img, float u, float v, bool linear, hipTextureAddressMode m) {
  u = std::nearbyint(u * 256.0f) / 256.0f;
  v = std::nearbyint(v * 256.0f) / 256.0f;
  if (!linear) return texel(img, (int)std::floor(u), (int)std::floor(v), m);
  float x = u - 0.5f, y = v - 0.5f;
  int x0 = (int)std::floor(x), y0 = (int)std::floor(y);
  float a = x - x0, b = y - y0;
  return (1 - a) * (1 - b) * texel(img, x0, y0, m) + a * (1 - b) * texel(img, x0 + 1, y0, m) +
         (1 - a) * b * texel(img, x0, y0 + 1, m) + a * b * texel(img, x0 + 1, y0 + 1, m);
}

__global__ void sample2d(hipTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void sample_rgba(hipTextureObject_t t, float4* out) {
  int x = threadIdx.x, y = blockIdx.x;
  out[y * blockDim.x + x] = tex2D<float4>(t, x + 0.5f, y + 0.5f);
}

__global__ void fetch1d(hipTextureObject_t t, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

__global__ void sample3d(hipTextureObject_t t, float* out, int w, int h, int d) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  out[(z * h + y) * w + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

static hipTextureObject_t make_texture(const hipResourceDesc& res, bool linear, bool normalized, hipTextureAddressMode m,
                                  hipTextureReadMode read = hipReadModeElementType) {
  hipTextureDesc td = {};
  for (auto& a : td.addressMode) a = m;
  td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
  td.readMode = read;
  td.normalizedCoords = normalized;
  hipTextureObject_t t;
  CHECK(hipCreateTextureObject(&t, &res, &td, nullptr));
  return t;
}

// Samples `t` at texel-space points (scaled when normalized) and checks each against the CPU reference.
static void check_samples(const char* what, hipTextureObject_t t, const std::vector<float>& img, bool linear, bool normalized,
                          hipTextureAddressMode m) {
  std::vector<float2> at;
  for (int k = 0; k < 400; k++) {
    // points inside, on texel centres and edges, and outside on every side
    float u = -12.0f + (k * 0.37f) - std::floor(k / 97.0f) * 33.0f, v = -6.0f + (k % 41) * 0.9f;
    at.push_back({u, v});
  }
  int n = at.size();
  float2* dat;
  float* dout;
  CHECK(hipMalloc(&dat, n * sizeof(float2)));
  CHECK(hipMalloc(&dout, n * sizeof(float)));
  std::vector<float2> scaled(at);
  if (normalized)
    for (auto& p : scaled) p = {p.x / W, p.y / H};
  CHECK(hipMemcpy(dat, scaled.data(), n * sizeof(float2), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(sample2d, dim3((n + 63) / 64), dim3(64), 0, 0, t, dat, dout, n);
  CHECK(hipGetLastError());
  std::vector<float> got(n);
  CHECK(hipMemcpy(got.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int k = 0; k < n; k++) {
    float want = reference(img, at[k].x, at[k].y, linear, m);
    float tol = linear ? 1e-4f * (1.0f + std::fabs(want)) : 0.0f;
    if (!(std::fabs(got[k] - want) <= tol) && bad++ < 5)
      std::fprintf(stderr, "%s: at (%g, %g) got %g, want %g\n", what, at[k].x, at[k].y, got[k], want);
  }
  EXPECT(bad == 0);
  CHECK(hipFree(dat));
  CHECK(hipFree(dout));
  std::printf("%s: %d samples match\n", what, n);
}

int main() {
  std::vector<float> img(W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) img[y * W + x] = value(x, y);

  // a float array, filled and read back through the runtime's image copies
  hipChannelFormatDesc fd = hipCreateChannelDesc<float>();
  hipArray_t arr;
  CHECK(hipMallocArray(&arr, &fd, W, H, 0));
  CHECK(hipMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H, hipMemcpyHostToDevice));
  std::vector<float> back(W * H, -1.0f);
  CHECK(hipMemcpy2DFromArray(back.data(), W * sizeof(float), arr, 0, 0, W * sizeof(float), H, hipMemcpyDeviceToHost));
  EXPECT(back == img);
  std::printf("array copies: %d texels round trip\n", W * H);

  hipResourceDesc res = {};
  res.resType = hipResourceTypeArray;
  res.res.array.array = arr;
  const hipTextureAddressMode modes[] = {hipAddressModeClamp, hipAddressModeBorder, hipAddressModeWrap, hipAddressModeMirror};
  const char* names[] = {"clamp", "border", "wrap", "mirror"};
  char what[96];
  for (int mi = 0; mi < 4; mi++) {
    for (int linear = 0; linear < 2; linear++) {
      // wrap and mirror need normalized coordinates
      bool normalized = modes[mi] == hipAddressModeWrap || modes[mi] == hipAddressModeMirror || linear;
      hipTextureObject_t t = make_texture(res, linear, normalized, modes[mi]);
      std::snprintf(what, sizeof what, "array, %s, %s, %s", names[mi], linear ? "linear" : "nearest", normalized ? "normalized" : "texel coordinates");
      check_samples(what, t, img, linear, normalized, modes[mi]);
      CHECK(hipDestroyTextureObject(t));
    }
  }

  // pitched linear memory as a texture
  float* pitched;
  size_t pitch;
  CHECK(hipMallocPitch((void**)&pitched, &pitch, W * sizeof(float), H));
  EXPECT(pitch >= W * sizeof(float) && pitch % sizeof(float) == 0);
  CHECK(hipMemcpy2D(pitched, pitch, img.data(), W * sizeof(float), W * sizeof(float), H, hipMemcpyHostToDevice));
  hipResourceDesc pres = {};
  pres.resType = hipResourceTypePitch2D;
  pres.res.pitch2D.devPtr = pitched;
  pres.res.pitch2D.desc = fd;
  pres.res.pitch2D.width = W;
  pres.res.pitch2D.height = H;
  pres.res.pitch2D.pitchInBytes = pitch;
  hipTextureObject_t pt = make_texture(pres, false, false, hipAddressModeClamp);
  check_samples("pitched memory, clamp, nearest", pt, img, false, false, hipAddressModeClamp);
  CHECK(hipDestroyTextureObject(pt));

  // linear memory as a 1-D texture (a 1-D buffer image: typed buffer loads); fetches past its end read 0
  const int L = 1000;
  std::vector<float> lin(L);
  for (int i = 0; i < L; i++) lin[i] = 0.5f * i - 77.0f;
  float *dlin, *dfetch;
  CHECK(hipMalloc(&dlin, L * sizeof(float)));
  CHECK(hipMalloc(&dfetch, (L + 24) * sizeof(float)));
  CHECK(hipMemcpy(dlin, lin.data(), L * sizeof(float), hipMemcpyHostToDevice));
  hipResourceDesc lres = {};
  lres.resType = hipResourceTypeLinear;
  lres.res.linear.devPtr = dlin;
  lres.res.linear.desc = fd;
  lres.res.linear.sizeInBytes = L * sizeof(float);
  hipTextureObject_t lt = make_texture(lres, false, false, hipAddressModeClamp);
  hipLaunchKernelGGL(fetch1d, dim3((L + 24 + 63) / 64), dim3(64), 0, 0, lt, dfetch, L + 24);
  std::vector<float> gl(L + 24);
  CHECK(hipMemcpy(gl.data(), dfetch, gl.size() * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < L + 24; i++) EXPECT(gl[i] == (i < L ? lin[i] : 0.0f));
  CHECK(hipDestroyTextureObject(lt));
  CHECK(hipFree(dlin));
  CHECK(hipFree(dfetch));
  std::printf("linear memory: %d fetches match, %d past the end read 0\n", L, 24);

  // 8-bit RGBA read as normalized floats
  const int RW = 16, RH = 8;
  std::vector<uchar4> rgba(RW * RH);
  for (int i = 0; i < RW * RH; i++) rgba[i] = make_uchar4(i, 255 - i, (i * 37) & 255, 200);
  // spelled out: HIP 5.2's hipCreateChannelDesc<uchar4>() says signed, which reads these bytes as SNORM
  hipChannelFormatDesc cd = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
  hipArray_t carr;
  CHECK(hipMallocArray(&carr, &cd, RW, RH, 0));
  CHECK(hipMemcpy2DToArray(carr, 0, 0, rgba.data(), RW * 4, RW * 4, RH, hipMemcpyHostToDevice));
  hipResourceDesc cres = {};
  cres.resType = hipResourceTypeArray;
  cres.res.array.array = carr;
  hipTextureObject_t ct = make_texture(cres, false, false, hipAddressModeClamp, hipReadModeNormalizedFloat);
  float4* dc;
  CHECK(hipMalloc(&dc, RW * RH * sizeof(float4)));
  hipLaunchKernelGGL(sample_rgba, dim3(RH), dim3(RW), 0, 0, ct, dc);
  std::vector<float4> gc(RW * RH);
  CHECK(hipMemcpy(gc.data(), dc, gc.size() * sizeof(float4), hipMemcpyDeviceToHost));
  for (int i = 0; i < RW * RH; i++) {
    const uchar4 c = rgba[i];
    EXPECT(gc[i].x == c.x / 255.0f && gc[i].y == c.y / 255.0f && gc[i].z == c.z / 255.0f && gc[i].w == c.w / 255.0f);
  }
  std::printf("rgba8 normalized: %d texels match\n", RW * RH);

  // a 3-D array, copied in with hipMemcpy3D
  const int X = 9, Y = 7, Z = 5;
  std::vector<float> vol(X * Y * Z);
  for (int i = 0; i < X * Y * Z; i++) vol[i] = i * 0.25f - 10.0f;
  hipArray_t varr;
  CHECK(hipMalloc3DArray(&varr, &fd, make_hipExtent(X, Y, Z), 0));
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(vol.data(), X * sizeof(float), X, Y);
  p.dstArray = varr;
  p.extent = make_hipExtent(X, Y, Z);
  p.kind = hipMemcpyHostToDevice;
  CHECK(hipMemcpy3D(&p));
  hipResourceDesc vres = {};
  vres.resType = hipResourceTypeArray;
  vres.res.array.array = varr;
  hipTextureObject_t vt = make_texture(vres, false, false, hipAddressModeClamp);
  float* dv;
  CHECK(hipMalloc(&dv, vol.size() * sizeof(float)));
  hipLaunchKernelGGL(sample3d, dim3(Y, Z), dim3(X), 0, 0, vt, dv, X, Y, Z);
  std::vector<float> gv(vol.size());
  CHECK(hipMemcpy(gv.data(), dv, gv.size() * sizeof(float), hipMemcpyDeviceToHost));
  EXPECT(gv == vol);
  std::printf("3-D array: %d texels match\n", X * Y * Z);

  CHECK(hipDestroyTextureObject(ct));
  CHECK(hipDestroyTextureObject(vt));
  CHECK(hipFreeArray(arr));
  CHECK(hipFreeArray(carr));
  CHECK(hipFreeArray(varr));
  CHECK(hipFree(pitched));
  CHECK(hipFree(dc));
  CHECK(hipFree(dv));
  std::printf("texture test passed\n");
  return 0;
}
